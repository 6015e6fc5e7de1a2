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
import type { CycleRequestPhase, NodesByPhase } from '../../api/cycle-node-request.js';
import { countByPhase } from '../../api/cycle-bounds.js';
import { API_VERSION, CYCLE_NODE_REQUEST, allAtOnce } from '../../api/names.js';
import { nodeGroupsOf } from '../../api/node-groups.js';
import type { GroupNode } from '../../activities/cycle/resolve.js';
import { cycleNodesQuery, cycleStatusQuery, drainProgressSignal, lockHolderProbeSignal, nodeProgressSignal, specChangedUpdate, type DrainReport } from '../messages.js';
import { FORCED_OBJECT_EVENT_REASON, forcedLine, freshForced } from '../drain/status.js';
import { immutableChanges } from './spec-change.js';
import { NodeGroupAttr, PhaseAttr } from '../search-attributes.js';
import { HeldLocks } from './lock.js';
import type { CycleRequestInput, CycleStatus, CycleNodeStatus } from './types.js';
import { act } from './steps.js';
import { boundedStatus, nodesChangedAfter, NODES_PAGE } from './view.js';
import { pending } from './pending.js';
import { nextBatch } from './batches.js';
import { cordonBatch, scaleUp, startCycles } from './cycling.js';
import { heal, startHealing } from './healing.js';
import { carried, fresh, restored, JOURNAL, KEPT_FAILED, KEPT_RETURNED, type LiveNode, type Next, type RequestCarry, type Step } from './carry.js';

/** History events after which a run continues as new (Temporal's hard limit is 51,200). */
const HISTORY_BUDGET = 8_000;
/** Lines of per-node detail in the Web UI (a 5,000-node request would render 5,000). */
const DETAIL_LINES = 200;

export type { LiveNode, Next, RequestCarry, Step } from './carry.js';

export interface CycleRequestRun extends CycleRequestInput {
  /** History events before continue-as-new (tests force a small one). */
  historyBudget?: number;
  /** How often the node-group locks check that this request still runs. */
  lockProbeMs?: number;
  /** The state of the run before (continue-as-new). */
  carry?: RequestCarry;
}

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
  return boundedStatus(r);
}

/** One request's state, its messages, its reporting and its continue-as-new; the phases are functions of it. */
export class Request {
  readonly c: RequestCarry;
  readonly st: CycleStatus;
  readonly locks: HeldLocks;
  readonly key: string;
  readonly selfId = workflowInfo().workflowId;
  /** Per node, the forced actions of its drain already recorded on the object (this run). */
  private readonly forcedSeen = new Map<string, number>();

  constructor(readonly input: CycleRequestRun) {
    const { request } = input;
    this.key = `${request.namespace}/${request.name}/${request.uid}`;
    this.c = input.carry ? restored(input.carry) : fresh();
    this.st = this.c.st;
    this.locks = new HeldLocks(this.c.locks);
    this.listen();
    const groups = nodeGroupsOf(input.spec);
    if (groups[0] && !input.carry) upsertSearchAttributes([{ key: NodeGroupAttr, value: groups[0] }]);
    this.render();
  }

  /** Messages: the status query, the node cycles' and drains' reports, the spec edits. */
  private listen(): void {
    setHandler(cycleStatusQuery, () => boundedStatus(this));
    setHandler(cycleNodesQuery, ({ changedAfter, limit }) => nodesChangedAfter(this, changedAfter, limit));
    setHandler(lockHolderProbeSignal, () => undefined); // the locks' "are you there": answered by being there
    setHandler(nodeProgressSignal, (n) => this.onNodeProgress(n));
    setHandler(drainProgressSignal, async (d) => {
      const n = this.c.live[d.nodeName]?.s;
      if (n) this.update(n, { drainMessage: d.message, evicted: d.evicted });
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
    const cur = this.statusOf(n.nodeName);
    if (!cur || (n.seq !== undefined && cur.seq !== undefined && n.seq <= cur.seq) || (ended(cur.phase) && !ended(n.phase))) return;
    this.update(cur, { ...n, drainMessage: n.phase === 'DrainingPods' ? cur.drainMessage : undefined });
    if (n.phase === 'Successful') this.nodeCycled(n.nodeName, n.message);
    else if (n.phase === 'Failed') this.nodeFailed(n.nodeName, `${n.nodeName}: ${n.message ?? 'failed'}`);
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

  // ---- The selection, a cursor (#28): nodes are taken a page at a time, as batches need them.

  /** Takes nodes of the selection (the resolve's first page, or nextNodes'): each is Pending and queued. */
  take(nodes: GroupNode[], asked: number): void {
    for (const n of nodes) {
      if (this.c.live[n.name] || (this.c.cursor.after !== undefined && n.name <= this.c.cursor.after)) continue;
      const s: CycleNodeStatus = { nodeName: n.name, phase: 'Pending', providerID: n.providerID, nodeGroup: n.nodeGroup };
      this.c.live[n.name] = { s, ip: n.internalIP, at: n.createdAtMs, ready: n.ready, cordoned: n.cordoned };
      this.touch(s);
      this.c.queue.push(n.name);
      this.c.cursor.after = n.name;
      this.c.cursor.taken++;
    }
    if (nodes.length < asked || this.c.cursor.taken >= this.st.nodesTotal) this.exhausted();
  }

  /** The selection has no more nodes: those counted at the resolve and gone since are no longer counted. */
  private exhausted(): void {
    this.c.cursor.done = true;
    const gone = this.st.nodesTotal - this.c.cursor.taken;
    if (gone > 0) {
      this.st.nodesTotal -= gone;
      this.counts().Pending -= gone;
    }
  }

  /** Fills the queue up to `want` nodes from the selection (≤ a page). */
  async refill(want: number): Promise<void> {
    const { cursor, resolved } = this.c;
    const limit = Math.min(NODES_PAGE, want - this.c.queue.length);
    if (cursor.done || limit <= 0 || !resolved) return;
    const { nodes } = await act.nextNodes.executeWithOptions({ summary: `next ${limit} nodes after ${cursor.after ?? 'the first'}` }, [
      { spec: this.input.spec, after: cursor.after, limit, resolvedAtMs: resolved.resolvedAtMs },
    ]);
    this.take(nodes, limit);
  }

  // ---- Node cycles' ends, from their reports or (same run) their results; the first word counts.

  nodeCycled(name: string, message?: string): void {
    const l = this.c.live[name];
    if (!l?.a) return;
    l.a = false;
    this.done(name, message);
  }

  /** A node is cycled (or gone): it leaves the request (counted; its status in the journal). */
  done(name: string, message?: string): void {
    this.mark(name, 'Successful', message);
    this.leave(name);
    // The phase's message counts the nodes still draining: it must not stay at the batch's start value.
    if (this.st.phase === 'WaitingTermination') this.st.message = this.drainingMessage();
  }

  /** A node ended (cycled, or healed after a failure): out of the live set, into the journal (and the failed, the first ones). */
  leave(name: string): void {
    const l = this.c.live[name];
    if (!l) return;
    delete this.c.live[name];
    const s = l.s;
    if (s.phase === 'Failed' && this.c.failed.length < KEPT_FAILED && !this.c.failed.some((f) => f.nodeName === name)) this.c.failed.push(s);
    if (s.phase === 'Successful' && s.returning?.length) this.returned(s);
    this.journal(s);
  }

  private returned(s: CycleNodeStatus): void {
    const r = this.c.returned;
    r.count++;
    r.pods += s.returning!.length;
    if (r.nodes.length < KEPT_RETURNED) r.nodes.push({ nodeName: s.nodeName, phase: s.phase, returning: s.returning });
  }

  private journal(s: CycleNodeStatus): void {
    const j = this.c.journal;
    const at = j.findIndex((x) => x.nodeName === s.nodeName);
    if (at >= 0) j.splice(at, 1);
    j.push(s);
    while (j.length > JOURNAL) this.c.journalFrom = j.shift()!.change ?? this.c.journalFrom;
  }

  drainingMessage(): string {
    const n = this.c.batch.toStart.length + this.activeCount();
    return n ? `${n} node${n === 1 ? '' : 's'} draining` : 'no node draining';
  }

  /** The GroupNode of a live node. */
  node(name: string): GroupNode {
    const l = this.c.live[name]!;
    return { name, providerID: l.s.providerID ?? '', nodeGroup: l.s.nodeGroup ?? '', ready: l.ready, cordoned: l.cordoned, internalIP: l.ip, createdAtMs: l.at };
  }

  /** A node's status: while live, else its last in the journal. */
  statusOf(name: string): CycleNodeStatus | undefined {
    const live = this.c.live[name]?.s;
    if (live) return live;
    for (let i = this.c.journal.length - 1; i >= 0; i--) if (this.c.journal[i]!.nodeName === name) return this.c.journal[i];
    return undefined;
  }

  liveNodes(): LiveNode[] {
    return Object.values(this.c.live);
  }

  /** Names of the nodes whose cycles run. */
  activeNames(): string[] {
    return Object.keys(this.c.live).filter((n) => this.c.live[n]!.a);
  }

  activeCount(): number {
    let n = 0;
    for (const k in this.c.live) if (this.c.live[k]!.a) n++;
    return n;
  }

  /** Names of the nodes in flight (claimed or detached, not terminated). */
  inFlightNames(): string[] {
    return Object.keys(this.c.live).filter((n) => this.c.live[n]!.f);
  }

  nodeFailed(name: string, failure: string): void {
    const l = this.c.live[name];
    if (!l?.a) return;
    l.a = false;
    if (!this.c.cancelled.includes(name)) this.c.failure ??= failure;
  }

  checkFailure(): void {
    if (this.c.failure !== undefined) throw ApplicationFailure.nonRetryable(`node cycle failed: ${this.c.failure}`, 'NodeCycleFailed');
  }

  isInFlight(name: string): boolean {
    return this.c.live[name]?.f === true;
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
    return continueAsNew<typeof cycleNodeRequestWorkflow>({ ...rest, carry: carried(this.c) });
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
    const n = this.statusOf(name);
    if (n) this.update(n, { phase, message });
  }

  /** Counts per phase of every node of the selection (those not taken yet are Pending). */
  counts(): NodesByPhase {
    return (this.st.nodesByPhase ??= countByPhase([]));
  }

  /** Changes a node's status: its phase counted, and the request's next change number (what cycleNodes pages by). */
  update(n: CycleNodeStatus, patch: Partial<CycleNodeStatus>): void {
    const before = n.phase;
    Object.assign(n, patch);
    if (n.phase !== before) {
      const c = this.counts();
      c[before]--;
      c[n.phase]++;
      this.st.nodesCycled = c.Successful;
    }
    this.touch(n);
  }

  /** A node's status changed: it gets the next change number (what cycleNodes pages by). */
  touch(n: CycleNodeStatus): void {
    n.change = this.st.changes = (this.st.changes ?? 0) + 1;
  }

  render(): void {
    const { request } = this.input;
    const said = (n: CycleNodeStatus) => (n.phase === 'DrainingPods' ? n.drainMessage?.split('\n').slice(0, 3).join(' ') : ended(n.phase) ? undefined : n.message);
    const live = this.liveNodes();
    const lines = live.slice(0, DETAIL_LINES).map(({ s: n }) => `- \`${n.nodeName}\` ${n.phase}${said(n) ? `: ${said(n)}` : ''}`);
    if (live.length > DETAIL_LINES) lines.push(`- … ${live.length - DETAIL_LINES} more`);
    setCurrentDetails(
      [`**${request.namespace}/${request.name}**: ${this.st.phase} — ${this.st.nodesCycled}/${this.st.nodesTotal} nodes cycled`, this.st.message, ...lines].filter(Boolean).join('\n'),
    );
  }
}

const ended = (p: string) => p === 'Successful' || p === 'Failed';

