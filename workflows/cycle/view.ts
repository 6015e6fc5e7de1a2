// What the request answers about its nodes (#28): the cycleStatus answer is bounded (the nodes in
// flight, the first failed, the last cycled, pending ones while the list is short, and counts per
// phase for all), and cycleNodes pages the nodes changed after a given change number, so the
// bridge can keep every CycleNodeStatus up to date without one answer naming the whole fleet.
import { countByPhase, LISTED_FAILED, LISTED_FINISHED, LISTED_UP_TO, MAX_LISTED_NODES } from '../../api/cycle-bounds.js';
import type { CycleNodesPage, CycleNodeStatus, CycleStatus } from './types.js';

/** Most nodes one cycleNodes answer holds (about 150 KiB with EC2 names and drain messages). */
export const NODES_PAGE = 500;

const ended = (n: CycleNodeStatus) => n.phase === 'Successful' || n.phase === 'Failed';
const byChange = (a: CycleNodeStatus, b: CycleNodeStatus) => (a.change ?? 0) - (b.change ?? 0);

/** The cycleStatus answer: the status with a bounded list of nodes and every node counted. */
export function boundedStatus(st: CycleStatus): CycleStatus {
  const keep = new Set<string>();
  const take = (nodes: CycleNodeStatus[]) => {
    for (const n of nodes) if (keep.size < MAX_LISTED_NODES) keep.add(n.nodeName);
  };
  take(st.nodes.filter((n) => !ended(n) && (n.phase !== 'Pending' || n.message)));
  take(st.nodes.filter((n) => n.phase === 'Failed').sort(byChange).slice(0, LISTED_FAILED));
  take(st.nodes.filter((n) => n.phase === 'Successful').sort(byChange).slice(-LISTED_FINISHED));
  for (const n of st.nodes) if (n.phase === 'Pending' && keep.size < LISTED_UP_TO) keep.add(n.nodeName);
  return { ...st, nodes: st.nodes.filter((n) => keep.has(n.nodeName)), nodesByPhase: countByPhase(st.nodes) };
}

/** The cycleNodes answer: the nodes changed after `changedAfter`, oldest change first, at most `limit` (≤ NODES_PAGE). */
export function nodesChangedAfter(st: CycleStatus, changedAfter: number, limit = NODES_PAGE): CycleNodesPage {
  const nodes = st.nodes.filter((n) => (n.change ?? 0) > changedAfter).sort(byChange).slice(0, Math.max(1, Math.min(limit, NODES_PAGE)));
  return { nodes, changes: st.changes ?? 0 };
}
