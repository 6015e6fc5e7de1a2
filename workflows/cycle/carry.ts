// What a CycleNodeRequest carries across continue-as-new (#28: bounded by the nodes in flight,
// never the fleet): the selection is a cursor, ended nodes leave the live set (counted per phase,
// the first failed and a journal of the last changes kept), and the lists name live nodes only.
import type { CycleRequestPhase } from '../../api/cycle-node-request.js';
import type { ResolvedCycle } from '../../activities/cycle/resolve.js';
import type { HeldNode } from '../../activities/cycle/claim.js';
import type { CycleNodeStatus, CycleStatus } from './types.js';

/** Ended nodes' statuses the request keeps for cycleNodes (the bridge pages them from its last look). */
export const JOURNAL = 1_000;
/** Of the journal, what a continue-as-new carries at most (the newest first). */
export const JOURNAL_CARRIED_BYTES = 48 * 1024;
/** Of the journal, what a carry keeps however many nodes are live (the bridge's catch-up after a carry). */
export const JOURNAL_CARRIED_MIN_BYTES = 4 * 1024;
/**
 * What a continue-as-new aims to carry at most (JSON characters; under the 256 KiB target with room
 * for the payload's metadata and non-ASCII): the live nodes' messages share what the rest leaves,
 * then the journal fills up to JOURNAL_CARRIED_BYTES. Without the share, 1,000 nodes draining
 * behind long drain messages (3 KiB each) carried 3.9 MiB, past Temporal's 2 MiB limit (#28).
 */
export const CARRY_BUDGET_CHARS = 240 * 1024;
/** Failed nodes kept by name (the first ones): the rest are counted. */
export const KEPT_FAILED = 50;
/** Nodes set aside because a NodeMaintenance holds them, at most: then the request waits for one. */
export const MAX_HELD = 500;
/** Nodes named in the end message's Pods-left list (the rest are counted). */
export const KEPT_RETURNED = 20;

/**
 * A node the request has taken from its selection and not yet seen end (#28: the request holds
 * only these, not the fleet): its status (what the bridge mirrors) and what the cycle needs of the
 * Node beyond it (its GroupNode is rebuilt from both).
 */
export interface LiveNode {
  s: CycleNodeStatus;
  ip?: string;
  at: number;
  ready: boolean;
  cordoned: boolean;
  /** In flight: claimed or detached and not terminated, what healing must put back. */
  f?: boolean;
  /** Its node cycle runs. */
  a?: boolean;
  /** The scale-down release (its id) that waits for this node to be cycled. */
  r?: number;
}

/**
 * The request's whole state: everything a run needs to go on where the last one stopped. Bounded
 * by the nodes in flight (#28): the selection is a cursor, ended nodes leave (counted per phase,
 * the first failed and a journal of the last changes kept), so the carry never lists the fleet.
 */
export interface RequestCarry {
  /** The next step (the displayed phase, st.phase, may differ: waiting for a free slot still shows WaitingTermination). */
  step: Step | 'Successful' | 'Failed';
  /** Phase, message, counts; `st.nodes` is always empty here (the nodes are `live`, `failed`, `journal`). */
  st: CycleStatus;
  resolved?: { provider: string; groups: string[]; settings: ResolvedCycle['settings']; resolvedAtMs: number };
  /** The selection read so far: the last name taken, how many, and whether it is exhausted. */
  cursor: { after?: string; taken: number; done: boolean };
  /** Nodes taken and not ended: queued, held, in flight. */
  live: Record<string, LiveNode>;
  /** Taken nodes not yet in a batch (a page at most). */
  queue: string[];
  /** The current batch; `toCordon` and `toStart` are what is left of its CordoningNode and WaitingTermination steps. */
  batch: { nodes: string[]; toCordon: string[]; toStart: string[] };
  /** Scale-down protection to lift once the nodes marked with its id are cycled. */
  releases: Array<{ id: number; newNodes: string[] }>;
  /** The last batch's replacements (never counted as new for the next one). */
  recent: string[];
  /** The first failed nodes' statuses (KEPT_FAILED); `st.nodesByPhase.Failed` counts all. */
  failed: CycleNodeStatus[];
  /** The last ended nodes' statuses, oldest change first (JOURNAL); cycleNodes pages them with the live ones. */
  journal: CycleNodeStatus[];
  /** Changes up to this one may have left the journal (cycleNodes says so: the bridge reads such nodes elsewhere). */
  journalFrom: number;
  /** Nodes whose drain left a pod that kept coming back: the first few, and how many nodes and pods. */
  returned: { nodes: CycleNodeStatus[]; count: number; pods: number };
  locks: string[];
  requested?: number | 'all';
  concurrency: number;
  /** What the request failed with and its type (for the final failure after a continue-as-new). */
  failureType?: string;
  /** The first node cycle that failed. */
  failure?: string;
  /** Nodes whose cycle this request cancelled (healing speaks for them), and those still to cancel. */
  cancelled: string[];
  toCancel: string[];
  toHeal: string[];
  healMessage?: string;
  /** Nodes set aside because a NodeMaintenance holds them (NM-7.6), tried again once only they are left. */
  held?: HeldNode[];
  /** Why the last batch could not take more nodes: the first budget without room. */
  budgetWait?: string;
  /** The nodes the last batch was refused a slot for, each with its budget's words (what the budget wait waits on). */
  budgetRefused?: Array<{ node: string; reason: string }>;
}

export type Step = Exclude<CycleRequestPhase, 'Successful' | 'Failed'>;
export type Next = RequestCarry['step'];

export function fresh(): RequestCarry {
  return {
    step: 'Pending',
    st: { phase: 'Pending', message: '', nodes: [], nodesCycled: 0, nodesTotal: 0, startedAt: new Date().toISOString() },
    cursor: { taken: 0, done: false },
    live: {},
    queue: [],
    batch: { nodes: [], toCordon: [], toStart: [] },
    releases: [],
    recent: [],
    failed: [],
    journal: [],
    journalFrom: 0,
    returned: { nodes: [], count: 0, pods: 0 },
    locks: [],
    concurrency: 0,
    cancelled: [],
    toCancel: [],
    toHeal: [],
  };
}

const chars = (x: unknown) => JSON.stringify(x).length;
/** A string cut to n characters (its first lines first), marked as cut; undefined when n leaves nothing useful. */
export const cut = (t: string | undefined, n: number): string | undefined => (t === undefined || t.length <= n ? t : n < 16 ? undefined : `${t.slice(0, n - 2)} …`);

/**
 * What a continue-as-new carries of the state (#28: within CARRY_BUDGET_CHARS where the nodes in
 * flight allow it): each live node's message and drain message cut to its share of the room the
 * rest of the carry leaves (a node's cycle and drain report again when they change; the bridge has
 * the whole message already), then the newest of the journal that fits. The state itself is not
 * changed. restored() undoes what is not cut.
 */
export function carried(c: RequestCarry): RequestCarry {
  // A live node's name is its key: carried once (restored() puts it back).
  const entries = Object.entries(c.live).map(([k, l]): [string, LiveNode] => [k, { ...l, s: { ...l.s, nodeName: undefined as unknown as string } }]);
  const bare = Object.fromEntries(entries.map(([k, l]) => [k, { ...l, s: { ...l.s, message: undefined, drainMessage: undefined } }]));
  const fixed = chars({ ...c, live: bare, journal: [] });
  // The messages share the room: the longest are cut to the longest length that fits (short ones
  // stay whole); per node its message first (the cycle's step), then its drain's. 40 characters
  // of each go to the keys and quotes.
  const room = CARRY_BUDGET_CHARS - JOURNAL_CARRIED_MIN_BYTES - fixed;
  const text = (l: LiveNode) => (l.s.message?.length ?? 0) + (l.s.drainMessage?.length ?? 0);
  const cap = fairCap(entries.map(([, l]) => text(l)), room, 40);
  const live: Record<string, LiveNode> = {};
  for (const [k, l] of entries) {
    if (text(l) <= cap) live[k] = l;
    else {
      const message = cut(l.s.message, cap);
      live[k] = { ...l, s: { ...l.s, message, drainMessage: cut(l.s.drainMessage, cap - (message?.length ?? 0)) } };
    }
  }
  const out = { ...c, live, journal: [] as CycleNodeStatus[] };
  const journalRoom = Math.min(JOURNAL_CARRIED_BYTES, Math.max(JOURNAL_CARRIED_MIN_BYTES, CARRY_BUDGET_CHARS - chars(out)));
  return { ...out, ...newestJournal(c.journal, c.journalFrom, journalRoom) };
}

/**
 * Statuses whose messages and drain messages fit `room` characters together (fairCap: the longest
 * cut to one length, the short whole): copies, the state itself is not changed. For answers
 * (cycleStatus, cycleNodes) as carried() does for the carry.
 */
export function sharedMessages(nodes: CycleNodeStatus[], room: number): CycleNodeStatus[] {
  const text = (n: CycleNodeStatus) => (n.message?.length ?? 0) + (n.drainMessage?.length ?? 0);
  const cap = fairCap(nodes.map(text), room, 40);
  return nodes.map((n) => {
    if (text(n) <= cap) return n;
    const message = cut(n.message, cap);
    return { ...n, message, drainMessage: cut(n.drainMessage, cap - (message?.length ?? 0)) };
  });
}

/** The state a carry holds, as the run works with it (each live node named again, carried() left its name out). */
export function restored(c: RequestCarry): RequestCarry {
  for (const [k, l] of Object.entries(c.live)) l.s.nodeName = k;
  return c;
}

/**
 * The largest cap such that the lengths, each cut to it (a cut one costing `overhead` more), sum
 * to at most `room`: the longest are cut, the short kept whole. Infinity when all fit.
 */
export function fairCap(lengths: number[], room: number, overhead: number): number {
  const sorted = [...lengths].sort((a, b) => a - b);
  let used = 0;
  for (let i = 0; i < sorted.length; i++) {
    const rest = sorted.length - i;
    // Every length from i on is cut to the same cap: the room left, shared.
    const cap = Math.floor((room - used) / rest) - overhead;
    if (sorted[i]! > cap) return Math.max(0, cap);
    used += sorted[i]! + overhead;
  }
  return Infinity;
}

/** The newest journal entries within `room` characters, and the change up to which entries have left it. */
export function newestJournal(j: CycleNodeStatus[], journalFrom: number, room: number): Pick<RequestCarry, 'journal' | 'journalFrom'> {
  let used = 0;
  let keep = 0;
  for (let i = j.length - 1; i >= 0; i--) {
    used += chars(j[i]) + 1;
    if (used > room) break;
    keep++;
  }
  const dropped = j.length - keep;
  return { journal: j.slice(dropped), journalFrom: dropped ? Math.max(journalFrom, j[dropped - 1]!.change ?? 0) : journalFrom };
}
