// Labels and annotations the cycle puts on Nodes, so state survives crashes and a later run can
// heal what an earlier one left behind.

// The detach record (slipway.dev/detached-from-group) is api/node-groups.ts DETACHED_FROM_GROUP:
// the kwok provider reads the same annotation.
/**
 * Annotation: the request (ns/name/uid) that claimed the node. Also the claim that keeps
 * NodeMaintenances off it (spec NM-7.5): written with a resourceVersion precondition, and only
 * while no maintenance holds the node (maintenance.slipway.dev/held-by); the first claim wins.
 */
export const CYCLED_BY = 'slipway.dev/cycled-by';
/** "ns/name" of the CycleNodeRequest a CYCLED_BY value names (ns/name/uid, or a cnr/ns/name/uid workflow ID). */
export const claimantName = (value: string): string => value.replace(/^cnr\//, '').split('/').slice(0, 2).join('/');
/** cluster-autoscaler: do not scale this node down. */
export const CA_SCALE_DOWN_DISABLED = 'cluster-autoscaler.kubernetes.io/scale-down-disabled';
/** Ours: we set CA_SCALE_DOWN_DISABLED (value: the request), so we remove it; a pre-existing one is left alone. */
export const CA_ANNOTATION_OWNER = 'slipway.dev/scale-down-disabled-by';
/** Pod annotation the Wait method waits for. */
export const DO_NOT_DISRUPT = 'slipway.dev/do-not-disrupt';
