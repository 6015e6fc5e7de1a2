// What a CycleNodeRequest carries across continue-as-new (#28: bounded by the nodes in flight,
// never the fleet): the selection is a cursor, ended nodes leave the live set (counted per phase,
// the first failed and a journal of the last changes kept), and the lists name live nodes only.
import type { CycleRequestPhase } from '../../api/cycle-node-request.js';
import type { ResolvedCycle } from '../../activities/cycle/resolve.js';
import type { HeldNode } from '../../activities/cycle/claim.js';
import type { CycleNodeStatus, CycleStatus } from './types.js';

/** Ended nodes' statuses the request keeps for cycleNodes (the bridge pages them from its last look). */
export const JOURNAL = 1_000;
/** Of the journal, what a continue-as-new carries (the newest first): the carry stays well under 256 KiB. */
export const JOURNAL_CARRIED_BYTES = 48 * 1024;
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
