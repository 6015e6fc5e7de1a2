// Marks the cycle leaves on Nodes, so state survives crashes and a later run can heal what an
// earlier one left behind. Slipway's own keys live in api/ (api/cycle-node-request.ts: CYCLED_BY,
// CA_ANNOTATION_OWNER, DO_NOT_DISRUPT; the detach record is api/node-groups.ts DETACHED_FROM_GROUP,
// which the kwok provider reads too); here, cluster-autoscaler's and the claim's reader.
import { parseWorkflowId } from '../../workflows/ids.js';

/** "ns/name" of the CycleNodeRequest a CYCLED_BY value names (ns/name/uid, or a cnr/ns/name/uid workflow ID). */
export function claimantName(value: string): string {
  const id = parseWorkflowId(value);
  return id?.kind === 'request' ? `${id.namespace}/${id.name}` : value.split('/').slice(0, 2).join('/');
}
/** cluster-autoscaler: do not scale this node down. */
export const CA_SCALE_DOWN_DISABLED = 'cluster-autoscaler.kubernetes.io/scale-down-disabled';
