// Lifecycle hooks (Cluster API's pre-drain and pre-terminate deletion hooks, on the Node): another
// operator holds a node before Slipway drains it, or before Slipway deletes it and terminates its
// instance, by annotating the Node, and releases it by removing its annotation. These are the names
// other operators write, and their one parser. Free of zod (the workflow bundle stays small).

export type HookStage = 'pre-drain' | 'pre-terminate';

/**
 * Node annotation `pre-drain.hook.slipway.dev/<owner>` (value ignored, as in Cluster API): no Slipway
 * drain (a cycle's, a NodeMaintenance's, the CLI's) evicts anything from the node while one is there
 * (the CLI's does not cordon it either; cycles and maintenances cordon before their drain starts).
 * Checked when the drain starts; removing the last one lets it go on at once.
 */
export const PRE_DRAIN_HOOK_PREFIX = 'pre-drain.hook.slipway.dev/';
/**
 * Node annotation `pre-terminate.hook.slipway.dev/<owner>` (value ignored): a cycle, once the node is
 * drained (volumes detached), neither deletes the Node nor terminates its instance while one is there.
 */
export const PRE_TERMINATE_HOOK_PREFIX = 'pre-terminate.hook.slipway.dev/';
/**
 * Cluster API's own keys (`pre-drain.delete.hook.machine.cluster.x-k8s.io/<owner>`, and pre-terminate),
 * belonging on a Machine: copied onto a Node they hold it just the same (the safe reading of what was
 * meant), with a warning naming Slipway's key.
 */
export const CAPI_HOOK_PREFIX: Record<HookStage, string> = {
  'pre-drain': 'pre-drain.delete.hook.machine.cluster.x-k8s.io/',
  'pre-terminate': 'pre-terminate.delete.hook.machine.cluster.x-k8s.io/',
};
export const HOOK_PREFIX: Record<HookStage, string> = { 'pre-drain': PRE_DRAIN_HOOK_PREFIX, 'pre-terminate': PRE_TERMINATE_HOOK_PREFIX };

export const hookAnnotation = (stage: HookStage, owner: string) => `${HOOK_PREFIX[stage]}${owner}`;

export interface Hooks {
  /** Who holds the node at this stage, sorted, each once. Empty: nothing holds it. */
  owners: string[];
  /** Annotations read in a way their writer may not have meant (each still holds), for a Warning Event. */
  warnings: string[];
}

/**
 * The hooks of one stage on a node, from its annotations. What holds, and how it is named:
 * - `pre-drain.hook.slipway.dev/<owner>`: owner as written, whatever the value ("false" and "" hold too);
 * - Cluster API's key for the stage on the Node: owner as written, with a warning;
 * - the prefix without its slash (`pre-drain.hook.slipway.dev: <x>`, an owner put in the value):
 *   holds as owner `<x>` (or `(unnamed)`), with a warning; dropping it could release a node its
 *   writer meant to hold.
 * Another domain (`pre-drain.hook.example.com/x`) or another stage is not this stage's hook.
 */
export function lifecycleHooks(annotations: Record<string, string> | undefined, stage: HookStage): Hooks {
  const owners = new Set<string>();
  const warnings: string[] = [];
  const ours = HOOK_PREFIX[stage];
  const bare = ours.slice(0, -1);
  for (const key of Object.keys(annotations ?? {}).sort()) {
    if (key.startsWith(ours) && key.length > ours.length) owners.add(key.slice(ours.length));
    else if (key.startsWith(CAPI_HOOK_PREFIX[stage]) && key.length > CAPI_HOOK_PREFIX[stage].length) {
      const owner = key.slice(CAPI_HOOK_PREFIX[stage].length);
      owners.add(owner);
      warnings.push(`annotation ${key} is Cluster API's Machine hook; on a Node Slipway reads ${ours}${owner}, and holds the node for this one too`);
    } else if (key === bare || key === ours) {
      const owner = annotations![key]!.trim() || '(unnamed)';
      owners.add(owner);
      warnings.push(`annotation ${key} names no owner after "/" (expected ${ours}<owner>); holds the node as owner "${owner}" until it is removed`);
    }
  }
  return { owners: [...owners].sort(), warnings };
}

/** "backup-operator, db-operator and 2 more": owners as status lines name them. */
export function ownersText(owners: string[], max = 3): string {
  if (owners.length <= max) return owners.join(', ');
  return `${owners.slice(0, max).join(', ')} and ${owners.length - max} more`;
}
