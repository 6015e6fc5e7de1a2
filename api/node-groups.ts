// The node groups a request names. Free of zod, so the workflow bundle (one copy per V8 isolate)
// stays small.
/** The Node label that names a node's group (the kwok provider's groups, and the AWS glue's). */
export const NODE_GROUP_LABEL = 'slipway.dev/node-group';
/** The Node label the local stack's AWS emulation (stack/aws/node-sync.ts) puts on the Nodes it made for EC2 instances. */
export const SYNCED_LABEL = 'slipway.dev/emulated-by';

export function nodeGroupsOf(s: { nodeGroupName?: string; nodeGroupsList?: string[] }): string[] {
  return [...new Set([s.nodeGroupName ?? '', ...(s.nodeGroupsList ?? [])].filter((g) => g.length > 0))];
}

/**
 * Annotation on a Node whose instance was detached from its node group (value: the group), so the
 * instance can be put back (healing, or a later run's Pending) or is known to be on its way out.
 * One annotation for one fact: the cycle writes it before it detaches, on every provider, and the
 * kwok provider, which has no cloud to keep group membership, also reads it as its own record of
 * the detach (and of a group whose nodes are all detached still existing).
 */
export const DETACHED_FROM_GROUP = 'slipway.dev/detached-from-group';
/**
 * The kwok provider's earlier name for the same fact. Read (never written) for one release, so a
 * Node detached by the previous version is still found; cleared with the new one.
 */
export const DETACHED_FROM_GROUP_OLD = 'slipway.dev/detached-from';

/** The node group a Node was detached from (either name), or undefined. */
export function detachedFromGroup(annotations: Record<string, string> | undefined): string | undefined {
  return annotations?.[DETACHED_FROM_GROUP] ?? annotations?.[DETACHED_FROM_GROUP_OLD];
}

/** Merge-patch annotations that clear the detach record under both names. */
export const CLEAR_DETACHED_FROM_GROUP = { [DETACHED_FROM_GROUP]: null, [DETACHED_FROM_GROUP_OLD]: null } as const;
