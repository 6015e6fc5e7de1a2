// status.nodes[] of a CycleNodeRequest is bounded (#28): a Deployment does not list its pods, and a
// request over thousands of nodes would write a status past etcd's request limit. It lists the nodes
// in flight, the failed ones, the last ones finished and, while there is room, the pending ones (so
// a small request lists every node), plus counts per phase; every node has its CycleNodeStatus.
import { LISTED_FAILED, LISTED_FINISHED, LISTED_UP_TO, MAX_LISTED_NODES, type CycleNodePhase, type CycleNodeRequestStatus, type CycleNodeSummary } from '../../../api/cycle-node-request.js';

export { countByPhase } from '../../../api/cycle-node-request.js';
/** A status larger than this is cut (its nodes[] shortened) and says so; etcd refuses 1.5 MiB. */
export const STATUS_BUDGET_BYTES = 256 * 1024;

const ended = (p: CycleNodePhase) => p === 'Successful' || p === 'Failed';

/**
 * The entries of status.nodes[], from the previous list and the workflow's nodes (all of them, or
 * its own bounded list): in flight (and pending ones with a message: waiting for a budget slot or a
 * NodeMaintenance), the first failed, the last finished (in the order the bridge saw them finish,
 * kept from the previous list), then pending ones up to LISTED_UP_TO; never more than MAX_LISTED_NODES.
 * Order: the finished nodes the workflow no longer names, then the workflow's order.
 */
export function listedNodes(prev: readonly CycleNodeSummary[] | undefined, now: readonly CycleNodeSummary[]): CycleNodeSummary[] {
  const current = new Map(now.map((n) => [n.name, n]));
  const before = (prev ?? []).map((n) => current.get(n.name) ?? n);
  const listedBefore = new Set(before.map((n) => n.name));
  // Nodes the previous list did not name finished earlier, as far as the bridge can tell.
  const unlisted = (phase: CycleNodePhase) => now.filter((n) => n.phase === phase && !listedBefore.has(n.name));
  const listed = (phase: CycleNodePhase) => before.filter((n) => n.phase === phase);
  const keep = new Set<string>();
  const take = (nodes: readonly CycleNodeSummary[]) => {
    for (const n of nodes) if (keep.size < MAX_LISTED_NODES) keep.add(n.name);
  };
  take(now.filter((n) => !ended(n.phase) && (n.phase !== 'Pending' || n.message)));
  take([...listed('Failed'), ...unlisted('Failed')].slice(0, LISTED_FAILED));
  take([...unlisted('Successful'), ...listed('Successful')].slice(-LISTED_FINISHED));
  for (const n of now) if (n.phase === 'Pending' && keep.size < LISTED_UP_TO) keep.add(n.name);
  const gone = before.filter((n) => !current.has(n.name) && ended(n.phase));
  return [...gone, ...now].filter((n) => keep.has(n.name));
}

/** Which entries go first when a status is over budget: finished (oldest first), pending, in flight, failed (newest first). */
const dropRank = (n: CycleNodeSummary) => (n.phase === 'Successful' ? 0 : n.phase === 'Pending' ? 1 : n.phase === 'Failed' ? 3 : 2);

/**
 * A status within STATUS_BUDGET_BYTES: over it (long drain messages), nodes[] loses entries, least
 * telling first, and the message says so and where every node is. Never a failed write.
 */
export function fitBudget(s: CycleNodeRequestStatus, requestLabel: string | undefined, budget = STATUS_BUDGET_BYTES): CycleNodeRequestStatus {
  const nodes = s.nodes ?? [];
  let size = Buffer.byteLength(JSON.stringify(s));
  if (size <= budget) return s;
  const order = nodes.map((n, i) => ({ n, i })).sort((a, b) => dropRank(a.n) - dropRank(b.n) || (a.n.phase === 'Successful' ? a.i - b.i : b.i - a.i));
  const dropped = new Set<number>();
  const note = 500; // room for the message's note
  for (const { n, i } of order) {
    if (size + note <= budget) break;
    size -= Buffer.byteLength(JSON.stringify(n)) + 1;
    dropped.add(i);
  }
  const kept = nodes.filter((_, i) => !dropped.has(i));
  const where = requestLabel ? `kubectl get cns -l ${requestLabel}` : 'the CycleNodeStatus objects';
  const message = `${s.message ?? ''}${s.message ? ' ' : ''}(status.nodes[] cut to fit ${budget / 1024} KiB: ${dropped.size} entries left out; every node: ${where})`;
  return { ...s, message, nodes: kept, nodesNotListed: (s.nodesNotListed ?? 0) + dropped.size };
}
