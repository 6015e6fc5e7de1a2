// One CycleNodeRequest: Pending → Initialised → ScalingUp → CordoningNode → WaitingTermination →
// (next batch) … → Successful, or Healing → Failed. Surge first: a batch is detached without
// shrinking its group, so replacements come up (Ready, healthy) before any old node is cordoned.
// Healing is a compensation that runs on any failure and on cancellation (the object was deleted):
// nodes not yet terminated go back into their group and are uncordoned, and scale-down protection
// is removed, so no node is ever left outside its group or cordoned.
//
// Phases, one handler each (the table below), each in the file named after its group: pending.ts,
// batches.ts (forming the next batch, and the end), cycling.ts (a batch's scale-up, cordon and node
// cycles), healing.ts. This file keeps the request's state, its messages, its reporting and its
// continue-as-new. Between steps, and inside the long waits, the request continues as new once its
// history passes a budget, carrying its state (RequestCarry): its node locks and node cycles are
// ABANDONed children that outlive the switch and report to the request's workflow ID, which every
// run shares (see docs/design.md, "Bounded history").
import {
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  continueAsNew,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { CycleRequestPhase } from '../../api/cycle-node-request.js';
import { API_VERSION, CYCLE_NODE_REQUEST, allAtOnce } from '../../api/names.js';
import { nodeGroupsOf } from '../../api/node-groups.js';
import type { GroupNode, ResolvedCycle } from '../../activities/cycle/resolve.js';
import type { HeldNode } from '../../activities/cycle/claim.js';
import { cycleNodesQuery, cycleStatusQuery, drainProgressSignal, lockHolderProbeSignal, nodeProgressSignal, specChangedUpdate, type DrainReport } from '../messages.js';
import { FORCED_OBJECT_EVENT_REASON, forcedLine, freshForced } from '../drain/status.js';
import { immutableChanges } from './spec-change.js';
import { NodeGroupAttr, PhaseAttr } from '../search-attributes.js';
import { HeldLocks } from './lock.js';
import type { CycleRequestInput, CycleStatus, CycleNodeStatus } from './types.js';
import { act } from './steps.js';
import { boundedStatus, nodesChangedAfter } from './view.js';
import { pending } from './pending.js';
import { nextBatch } from './batches.js';
import { cordonBatch, scaleUp, startCycles } from './cycling.js';
import { heal, startHealing } from './healing.js';

/** History events after which a run continues as new (Temporal's hard limit is 51,200). */
const HISTORY_BUDGET = 8_000;
/** Lines of per-node detail in the Web UI (a 5,000-node request would render 5,000). */
const DETAIL_LINES = 200;

export interface CycleRequestRun extends CycleRequestInput {
  /** History events before continue-as-new (tests force a small one). */
  historyBudget?: number;
  /** How often the node-group locks check that this request still runs. */
  lockProbeMs?: number;
  /** The state of the run before (continue-as-new). */
  carry?: RequestCarry;
}

/** The request's whole state: everything a run needs to go on where the last one stopped. */
export interface RequestCarry {
  /** The next step (the displayed phase, st.phase, may differ: waiting for a free slot still shows WaitingTermination). */
  step: Step | 'Successful' | 'Failed';
  st: CycleStatus;
  resolved?: Omit<ResolvedCycle, 'nodes'>;
  /**
   * The selected nodes not cycled yet, by name; every list below names them. Each node is carried
   * once (the carry must stay under Temporal's 2 MB payload limit at thousands of nodes).
   */
  nodes: Record<string, GroupNode>;
  /** Nodes not yet in a batch. */
  queue: string[];
  /** The current batch; `toCordon` and `toStart` are what is left of its CordoningNode and WaitingTermination steps. */
  batch: { nodes: string[]; replacements: string[]; toCordon: string[]; toStart: string[] };
  /** Detached from their group and not terminated yet: what healing must put back. */
  inFlight: string[];
  /** Node cycles running. */
  active: string[];
  /** Replacement nodes seen so far (never counted as new again). */
  replacements: string[];
  /** Scale-down protection to lift once all of `nodes` have been cycled. */
  releases: Array<{ nodes: string[]; newNodes: string[] }>;
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

/** The table of contents: one handler per phase (in the file named after its group), each returning the next phase. */
const PHASES: Record<Step, (r: Request) => Promise<Next>> = {
  Pending: pending, // pending.ts
  Initialised: nextBatch, // batches.ts
  ScalingUp: scaleUp, // cycling.ts
  CordoningNode: cordonBatch, // cycling.ts
  WaitingTermination: startCycles, // cycling.ts
  Healing: heal, // healing.ts
};

export async function cycleNodeRequestWorkflow(input: CycleRequestRun): Promise<CycleStatus> {
  const r = new Request(input);
  let error: unknown; // what this run failed with, rethrown once healed
  for (let step = r.c.step; step !== 'Successful' && step !== 'Failed'; step = r.c.step) {
    try {
      r.c.step = await PHASES[step](r);
    } catch (err) {
      if (r.st.phase === 'Failed' || step === 'Healing') throw err; // invalid request, or healing broke
      error = err;
      startHealing(r, err);
    }
    if (r.c.step !== 'Successful' && r.c.step !== 'Failed' && r.overBudget()) await CancellationScope.nonCancellable(() => r.continueAsNew());
  }
  if (r.c.step === 'Failed') throw error ?? ApplicationFailure.nonRetryable(r.c.healMessage ?? r.st.message, r.c.failureType ?? 'NodeCycleFailed');
  return r.st;
}

/** One request's state, its messages, its reporting and its continue-as-new; the phases are functions of it. */
export class Request {
  readonly c: RequestCarry;
  readonly st: CycleStatus;
  readonly locks: HeldLocks;
  readonly index = new Map<string, CycleNodeStatus>();
  readonly key: string;
  readonly selfId = workflowInfo().workflowId;
  /** Per node, the forced actions of its drain already recorded on the object (this run). */
  private readonly forcedSeen = new Map<string, number>();

  constructor(readonly input: CycleRequestRun) {
    const { request } = input;
    this.key = `${request.namespace}/${request.name}/${request.uid}`;
    this.c = input.carry ?? fresh();
    this.st = this.c.st;
    for (const n of this.st.nodes) this.index.set(n.nodeName, n);
    this.locks = new HeldLocks(this.c.locks);
    this.listen();
    const groups = nodeGroupsOf(input.spec);
    if (groups[0] && !input.carry) upsertSearchAttributes([{ key: NodeGroupAttr, value: groups[0] }]);
    this.render();
  }

  /** Messages: the status query, the node cycles' and drains' reports, the spec edits. */
  private listen(): void {
    setHandler(cycleStatusQuery, () => boundedStatus(this.st));
    setHandler(cycleNodesQuery, ({ changedAfter, limit }) => nodesChangedAfter(this.st, changedAfter, limit));
    setHandler(lockHolderProbeSignal, () => undefined); // the locks' "are you there": answered by being there
    setHandler(nodeProgressSignal, (n) => this.onNodeProgress(n));
    setHandler(drainProgressSignal, async (d) => {
      const n = this.index.get(d.nodeName);
      if (n) this.touch(Object.assign(n, { drainMessage: d.message, evicted: d.evicted }));
      this.render();
      await this.recordForced(d);
    });
    setHandler(specChangedUpdate, ({ spec }) => this.changeConcurrency(spec.cycleSettings?.concurrency ?? 'all'), {
      validator: ({ spec: next }) => {
        if (['Successful', 'Failed', 'Healing'].includes(this.st.phase)) throw new Error(`the cycle has ended (${this.st.phase}): spec changes no longer apply`);
        const changed = immutableChanges(this.input.spec, next);
        if (changed.length) throw new Error(`only spec.cycleSettings.concurrency may change while a cycle runs; changed: ${changed.map((c) => `spec.${c}`).join(', ')}`);
        const c = next.cycleSettings?.concurrency;
        if (c !== undefined && !(Number.isInteger(c) && c >= 1)) throw new Error(`spec.cycleSettings.concurrency must be a whole number ≥ 1, not ${c}`);
      },
    });
  }

  /**
   * Issue 24.9: a pod a node's drain skipped or deleted instead of evicting is recorded on the
   * CycleNodeRequest too (a Warning Event naming the pod, the node, who asked and why). Counted per
   * node in this run; a later run's repeat is the same Event (its dedup key), not a second one.
   */
  private async recordForced(d: DrainReport): Promise<void> {
    const fresh = freshForced(d.forced, this.forcedSeen.get(d.nodeName) ?? 0);
    if (!fresh.length) return;
    this.forcedSeen.set(d.nodeName, d.forced!.total);
    const { namespace, name, uid } = this.input.request;
    for (const f of fresh) {
      await act.recordEvent.executeWithOptions({ summary: `event ${FORCED_OBJECT_EVENT_REASON[f.action]} on ${namespace}/${name}` }, [{
        involved: { kind: CYCLE_NODE_REQUEST.kind, apiVersion: API_VERSION, namespace, name, uid },
        type: 'Warning',
        reason: FORCED_OBJECT_EVENT_REASON[f.action],
        message: forcedLine(d.nodeName, f),
        dedupKey: `${this.selfId}/${d.nodeName}/${f.action}/${f.pod}/${f.at}`,
      }]);
    }
  }

  /** Reports may arrive out of order, or after the child's result: keep the newest, never undo an end. */
  private onNodeProgress(n: CycleNodeStatus): void {
    const cur = this.index.get(n.nodeName);
    if (!cur || (n.seq !== undefined && cur.seq !== undefined && n.seq <= cur.seq) || (ended(cur.phase) && !ended(n.phase))) return;
    this.touch(Object.assign(cur, n, { drainMessage: n.phase === 'DrainingPods' ? cur.drainMessage : undefined }));
    if (n.phase === 'Successful') this.nodeCycled(n.nodeName, n.message);
    else if (n.phase === 'Failed') this.nodeFailed(n.nodeName, `${n.nodeName}: ${n.message ?? 'failed'}`);
    this.countCycled();
    this.render();
  }

  /** Spec edits: only concurrency, taken by the next batch (nodes in flight keep cycling). */
  private changeConcurrency(requested: number | 'all'): { concurrency: number } {
    this.c.requested = requested;
    if (this.c.concurrency) this.c.concurrency = this.effective();
    this.st.concurrency = this.c.concurrency || undefined;
    this.render();
    return { concurrency: this.effective() };
  }

  effective(): number {
    const r = this.c.requested;
    return r === undefined ? this.c.concurrency : r === 'all' ? allAtOnce(this.st.nodesTotal) : r;
  }

  // ---- Node cycles' ends, from their reports or (same run) their results; the first word counts.

  nodeCycled(name: string, message?: string): void {
    if (!this.c.active.includes(name)) return;
    this.c.active = this.c.active.filter((n) => n !== name);
    this.done(name, message);
  }

  /** A node is cycled (or gone): it leaves the carry. */
  done(name: string, message?: string): void {
    this.c.inFlight = this.c.inFlight.filter((n) => n !== name);
    delete this.c.nodes[name];
    // The phase's message counts the nodes still draining: it must not stay at the batch's start value.
    if (this.st.phase === 'WaitingTermination') this.st.message = this.drainingMessage();
    this.mark(name, 'Successful', message);
  }

  drainingMessage(): string {
    const n = this.c.batch.toStart.length + this.c.active.length;
    return n ? `${n} node${n === 1 ? '' : 's'} draining` : 'no node draining';
  }

  node(name: string): GroupNode {
    return this.c.nodes[name]!;
  }

  nodeFailed(name: string, failure: string): void {
    if (!this.c.active.includes(name)) return;
    this.c.active = this.c.active.filter((n) => n !== name);
    if (!this.c.cancelled.includes(name)) this.c.failure ??= failure;
  }

  checkFailure(): void {
    if (this.c.failure !== undefined) throw ApplicationFailure.nonRetryable(`node cycle failed: ${this.c.failure}`, 'NodeCycleFailed');
  }

  isInFlight(name: string): boolean {
    return this.c.inFlight.includes(name);
  }

  // ---- Continue-as-new.

  overBudget(): boolean {
    const info = workflowInfo();
    return info.continueAsNewSuggested || info.historyLength >= (this.input.historyBudget ?? HISTORY_BUDGET);
  }

  /** Lets every message handler finish (nothing received is lost), then starts the next run with the state. */
  async continueAsNew(): Promise<never> {
    await condition(allHandlersFinished);
    this.c.locks = this.locks.ids;
    const { carry: _previous, ...rest } = this.input;
    return continueAsNew<typeof cycleNodeRequestWorkflow>({ ...rest, carry: this.c });
  }

  // ---- Reporting.

  /** A new message in the same phase (no search-attribute upsert). */
  say(message: string): void {
    this.st.message = message;
    this.render();
  }

  phase(p: CycleRequestPhase, message = this.st.message): void {
    upsertSearchAttributes([{ key: PhaseAttr, value: p }]);
    this.st.phase = p;
    this.st.message = message;
    this.render();
  }

  mark(name: string, phase: 'Successful' | 'Failed', message?: string): void {
    const n = this.index.get(name);
    if (n) this.touch(Object.assign(n, { phase, message }));
    this.countCycled();
  }

  /** A node's status changed: it gets the next change number (what cycleNodes pages by). */
  touch(n: CycleNodeStatus): void {
    n.change = this.st.changes = (this.st.changes ?? 0) + 1;
  }

  countCycled(): void {
    this.st.nodesCycled = this.st.nodes.filter((x) => x.phase === 'Successful').length;
  }

  render(): void {
    const { request } = this.input;
    const said = (n: CycleNodeStatus) => (n.phase === 'DrainingPods' ? n.drainMessage?.split('\n').slice(0, 3).join(' ') : ended(n.phase) ? undefined : n.message);
    const lines = this.st.nodes.slice(0, DETAIL_LINES).map((n) => `- \`${n.nodeName}\` ${n.phase}${said(n) ? `: ${said(n)}` : ''}`);
    if (this.st.nodes.length > DETAIL_LINES) lines.push(`- … ${this.st.nodes.length - DETAIL_LINES} more`);
    setCurrentDetails(
      [`**${request.namespace}/${request.name}**: ${this.st.phase} — ${this.st.nodesCycled}/${this.st.nodesTotal} nodes cycled`, this.st.message, ...lines].filter(Boolean).join('\n'),
    );
  }
}

const ended = (p: string) => p === 'Successful' || p === 'Failed';

function fresh(): RequestCarry {
  return {
    step: 'Pending',
    nodes: {},
    st: { phase: 'Pending', message: '', nodes: [], nodesCycled: 0, nodesTotal: 0, startedAt: new Date().toISOString() },
    queue: [],
    batch: { nodes: [], replacements: [], toCordon: [], toStart: [] },
    inFlight: [],
    active: [],
    replacements: [],
    releases: [],
    locks: [],
    concurrency: 0,
    cancelled: [],
    toCancel: [],
    toHeal: [],
  };
}

