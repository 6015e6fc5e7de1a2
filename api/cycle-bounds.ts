// How much of a CycleNodeRequest's nodes one status or answer lists (#28): zod-free, so the
// workflows may import it (test/unit/layers.test.ts keeps zod out of the workflow bundle).
import type { CycleNodePhase, NodesByPhase } from './cycle-node-request.js';

/** status.nodes[] lists at most this many entries (#28: a status must not grow with the fleet). */
export const MAX_LISTED_NODES = 1000;
/**
 * What a bounded list of a request's nodes names (the status, the cycleStatus answer): the nodes
 * in flight, the first LISTED_FAILED failed, the last LISTED_FINISHED cycled, and pending ones
 * while the list is shorter than LISTED_UP_TO (a small request lists every node).
 */
export const LISTED_FINISHED = 50;
export const LISTED_FAILED = 50;
export const LISTED_UP_TO = 100;

export function countByPhase(nodes: ReadonlyArray<{ phase: CycleNodePhase }>): NodesByPhase {
  const c: NodesByPhase = { Pending: 0, WaitingPods: 0, RemovingLabelsFromPods: 0, DrainingPods: 0, DeletingNode: 0, TerminatingNode: 0, Successful: 0, Failed: 0 };
  for (const n of nodes) c[n.phase]++;
  return c;
}

