// What the request answers about its nodes (#28): the cycleStatus answer is bounded (the nodes in
// flight, the first failed, the last cycled, pending ones while the list is short, and counts per
// phase for all), and cycleNodes pages the nodes changed after a given change number (the live
// ones and the journal of the last ended), so the bridge can keep every CycleNodeStatus up to date
// without one answer naming the whole fleet.
import { countByPhase, LISTED_FAILED, LISTED_FINISHED, LISTED_UP_TO, MAX_LISTED_NODES } from '../../api/cycle-bounds.js';
import type { CycleNodesPage, CycleNodeStatus, CycleStatus } from './types.js';
import type { Request } from './request.js';
import { sharedMessages } from './carry.js';

/** Most nodes one cycleNodes answer holds (about 150 KiB with EC2 names and short drain messages). */
export const NODES_PAGE = 500;
/**
 * What one answer (cycleStatus, a cycleNodes page) holds at most, in JSON characters: its messages
 * share what the nodes leave (#28: 1,000 nodes draining behind 3 KiB drain messages answered 3.4 MiB,
 * past Temporal's 2 MiB limit, so the bridge could not read the request at all).
 */
export const ANSWER_BUDGET_CHARS = 240 * 1024;

const chars = (x: unknown) => JSON.stringify(x).length;
const bare = (n: CycleNodeStatus): CycleNodeStatus => ({ ...n, message: undefined, drainMessage: undefined });

/** The nodes with their messages cut to share what the answer's budget leaves them. */
function within(nodes: CycleNodeStatus[], rest: unknown): CycleNodeStatus[] {
  return sharedMessages(nodes, ANSWER_BUDGET_CHARS - chars(rest) - chars(nodes.map(bare)));
}

const ended = (n: CycleNodeStatus) => n.phase === 'Successful' || n.phase === 'Failed';
const byChange = (a: CycleNodeStatus, b: CycleNodeStatus) => (a.change ?? 0) - (b.change ?? 0);
const byName = (a: CycleNodeStatus, b: CycleNodeStatus) => (a.nodeName < b.nodeName ? -1 : a.nodeName > b.nodeName ? 1 : 0);

/** The cycleStatus answer (and the result): the status with a bounded list of nodes and every node counted. */
export function boundedStatus(req: Request): CycleStatus {
  const { c, st } = req;
  const live = req.liveNodes().map((l) => l.s);
  const keep = new Map<string, CycleNodeStatus>();
  const take = (nodes: CycleNodeStatus[]) => {
    for (const n of nodes) if (keep.size < MAX_LISTED_NODES && !keep.has(n.nodeName)) keep.set(n.nodeName, n);
  };
  take(live.filter((n) => !ended(n) && (n.phase !== 'Pending' || n.message)));
  take([...c.failed, ...live.filter((n) => n.phase === 'Failed').sort(byChange)].slice(0, LISTED_FAILED));
  take(c.journal.filter((n) => n.phase === 'Successful').slice(-LISTED_FINISHED));
  for (const n of live) if (n.phase === 'Pending' && keep.size < LISTED_UP_TO && !keep.has(n.nodeName)) keep.set(n.nodeName, n);
  const out = { ...st, nodes: [] as CycleNodeStatus[], nodesByPhase: { ...(st.nodesByPhase ?? countByPhase([])) } };
  return { ...out, nodes: within([...keep.values()].sort(byName), out) };
}

/**
 * The cycleNodes answer: the nodes changed after `changedAfter`, oldest change first, at most
 * `limit` (≤ NODES_PAGE). `lostUpTo` says when changes the asker has not seen have left the
 * journal: those nodes' statuses are their node cycles' (workflow `<request>/<node>`).
 */
export function nodesChangedAfter(req: Request, changedAfter: number, limit = NODES_PAGE): CycleNodesPage {
  const changed = (n: CycleNodeStatus) => (n.change ?? 0) > changedAfter;
  const nodes = [...req.liveNodes().map((l) => l.s).filter(changed), ...req.c.journal.filter(changed)].sort(byChange).slice(0, Math.max(1, Math.min(limit, NODES_PAGE)));
  const lost = req.c.journalFrom > changedAfter ? { lostUpTo: req.c.journalFrom } : {};
  return { nodes: within(nodes, {}), changes: req.st.changes ?? 0, ...lost };
}
