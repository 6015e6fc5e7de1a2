// One CycleNodeRequest: Pending → Initialised → ScalingUp → CordoningNode → WaitingTermination →
// (next batch) … → Successful, or Healing → Failed. Surge first: a batch is detached without
// shrinking its group, so replacements come up (Ready, healthy) before any old node is cordoned.
// Healing is a compensation that runs on any failure and on cancellation (the object was deleted):
// nodes not yet terminated go back into their group and are uncordoned, and scale-down protection
// is removed, so no node is ever left outside its group or cordoned.
//
// Phases, one handler each (the table below). Between steps, and inside the long waits, the request
// continues as new once its history passes a budget, carrying its state (RequestCarry): its node
// locks and node cycles are ABANDONed children that outlive the switch and report to the request's
// workflow ID, which every run shares (see docs/design.md, "Bounded history").
import {
  ApplicationFailure,
  CancellationScope,
  allHandlersFinished,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  isCancellation,
  patched,
  setCurrentDetails,
  setHandler,
  sleep,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
  ParentClosePolicy,
} from '@temporalio/workflow';
import type { CycleRequestPhase } from '../../api/cycle-node-request.js';
import { nodeGroupsOf } from '../../api/node-groups.js';
import type { GroupNode, ResolvedCycle } from '../../activities/cycle/resolve.js';
import type { HeldNode } from '../../activities/cycle/claim.js';
import { cycleStatusQuery, drainProgressSignal, lockHolderProbeSignal, nodeProgressSignal, specChangedUpdate, type DrainReport } from '../messages.js';
import { FORCED_OBJECT_EVENT_REASON, forcedLine, freshForced } from '../drain/status.js';
import { immutableChanges } from './spec-change.js';
import { NodeGroupAttr, NodesAttr, PhaseAttr } from '../search-attributes.js';
import { HeldLocks } from './lock.js';
import { cycledMessage, cycleNodeWorkflow } from './node.js';
import { nodeCycleWorkflowId, type CycleRequestInput, type CycleStatus, type CycleNodeStatus } from './types.js';
import { longSteps, steps } from '../proxies.js';
import { API_VERSION, CYCLE_NODE_REQUEST, cycleRequester } from '../../api/names.js';

const act = steps;
const waits = longSteps('30 minutes');

/** How long the cloud group and the cluster may disagree before the request fails. */
const EQUILIBRIUM_LIMIT_MS = 5 * 60_000;
/** How long a batch's replacements may take to be Ready and healthy. */
const SCALE_UP_LIMIT_MS = 20 * 60_000;
/** History events after which a run continues as new (Temporal's hard limit is 51,200). */
const HISTORY_BUDGET = 8_000;
/** Per-node steps (cordons, child starts, heals) are issued this many at a time, so a run can switch between chunks. */
const CHUNK = 100;
/** How long healing waits for cancelled node cycles to stop before it heals anyway. */
const STOP_LIMIT_MS = 2 * 60_000;
/** Temporal's default limit on one search attribute value is 2,048 bytes; leave room. */
const SEARCH_ATTRIBUTE_BYTES = 2_000;
/** Lines of per-node detail in the Web UI (a 5,000-node request would render 5,000). */
const DETAIL_LINES = 200;
/** Nodes held by a NodeMaintenance are tried again after 5 s, backing off to 30 s (NM-7.6). */
/** How often a request whose next nodes have no NodeDisruptionBudget slot asks again. */
const BUDGET_RETRY_MS = 5_000;
const heldRetryMs = (attempt: number) => Math.min(30_000, 5_000 * 2 ** Math.min(attempt, 3));

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
  /** Tries in a row that found only held nodes (the backoff). */
  heldTries?: number;
  /** The run that claims nodes before it touches them (false only for workflows begun before claims existed). */
  claims?: boolean;
  /** The run that takes a NodeDisruptionBudget slot for each node before its batch (false for workflows begun before budgets). */
  budgets?: boolean;
  /** Why the last batch could not take more nodes: the first budget without room. */
  budgetWait?: string;
}

type Step = Exclude<CycleRequestPhase, 'Successful' | 'Failed'>;
type Next = RequestCarry['step'];

/** The table of contents: one handler per phase, each returning the next phase. */
const PHASES: Record<Step, (r: Request) => Promise<Next>> = {
  Pending: (r) => r.pending(),
  Initialised: (r) => r.nextBatch(),
  ScalingUp: (r) => r.scaleUp(),
  CordoningNode: (r) => r.cordonBatch(),
  WaitingTermination: (r) => r.startCycles(),
  Healing: (r) => r.heal(),
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
      r.startHealing(err);
    }
    if (r.c.step !== 'Successful' && r.c.step !== 'Failed' && r.overBudget()) await CancellationScope.nonCancellable(() => r.continueAsNew());
  }
  if (r.c.step === 'Failed') throw error ?? ApplicationFailure.nonRetryable(r.c.healMessage ?? r.st.message, r.c.failureType ?? 'NodeCycleFailed');
  return r.st;
}

/** One request's state and its phase handlers. */
export class Request {
  readonly c: RequestCarry;
  readonly st: CycleStatus;
  private readonly locks: HeldLocks;
  private readonly index = new Map<string, CycleNodeStatus>();
  private readonly key: string;
  private readonly selfId = workflowInfo().workflowId;
  /** Per node, the forced actions of its drain already recorded on the object (this run). */
  private readonly forcedSeen = new Map<string, number>();

  constructor(private readonly input: CycleRequestRun) {
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
    setHandler(cycleStatusQuery, () => this.st);
    setHandler(lockHolderProbeSignal, () => undefined); // the locks' "are you there": answered by being there
    setHandler(nodeProgressSignal, (n) => this.onNodeProgress(n));
    setHandler(drainProgressSignal, async (d) => {
      const n = this.index.get(d.nodeName);
      if (n) Object.assign(n, { drainMessage: d.message, evicted: d.evicted });
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
    Object.assign(cur, n, { drainMessage: n.phase === 'DrainingPods' ? cur.drainMessage : undefined });
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

  private effective(): number {
    const r = this.c.requested;
    return r === undefined ? this.c.concurrency : r === 'all' ? Math.max(1, this.st.nodesTotal) : r;
  }

  // ---- Pending: validate, take the node groups, pick nodes, wait (bounded) for the group and the
  // cluster to agree, then the initial health checks.
  async pending(): Promise<Next> {
    const { spec } = this.input;
    const groups = nodeGroupsOf(spec);
    let deadline = Date.now() + EQUILIBRIUM_LIMIT_MS;
    for (;;) {
      const resolved = await act.resolveCycle.executeWithOptions({ summary: `resolve node groups ${groups.join(', ')}` }, [{ spec, requestKey: this.key }]);
      if (resolved.errors.length) return this.invalid(resolved.errors.join('; ')); // nothing touched, nothing to heal but the locks
      const { nodes, ...rest } = resolved;
      this.c.resolved = rest;
      if (await this.takeLocks(rest)) {
        deadline = Date.now() + EQUILIBRIUM_LIMIT_MS;
        continue; // after a wait, pick nodes afresh
      }
      const { nodesWithoutInstance, instancesWithoutNode } = resolved.mismatch;
      if (!nodesWithoutInstance.length && !instancesWithoutNode.length) return this.selected(nodes, rest);
      const disagreement = `node group and cluster disagree: nodes without an instance [${nodesWithoutInstance.join(', ')}], instances without a node [${instancesWithoutNode.join(', ')}]`;
      if (Date.now() >= deadline) throw ApplicationFailure.nonRetryable(disagreement, 'NoEquilibrium');
      this.phase('Pending', `${disagreement}; waiting`);
      await sleep('5 seconds');
    }
  }

  /**
   * One request per node group at a time: two would fight over its capacity, and each would read the
   * other's detached instances as a disagreement. True when it had to wait.
   */
  private async takeLocks(r: Omit<ResolvedCycle, 'nodes'>): Promise<boolean> {
    if (this.c.locks.length) return false;
    let waited = false;
    await this.locks.acquire(r.provider, r.groups, (group, lockId) => {
      waited = true;
      this.phase('Pending', `waiting for node group ${group}: another request is cycling it (lock ${lockId})`);
    }, this.input.lockProbeMs);
    if (waited) this.phase('Pending', '');
    return waited;
  }

  private async selected(nodes: GroupNode[], r: Omit<ResolvedCycle, 'nodes'>): Promise<Next> {
    const { spec } = this.input;
    this.st.nodes = nodes.map((n) => ({ nodeName: n.name, phase: 'Pending', providerID: n.providerID, nodeGroup: n.nodeGroup }));
    for (const n of this.st.nodes) this.index.set(n.nodeName, n);
    this.st.nodesTotal = nodes.length;
    this.c.nodes = Object.fromEntries(nodes.map((n) => [n.name, n]));
    this.c.queue = nodes.map((n) => n.name);
    this.phase('Pending', r.warnings.join('; '));
    if (spec.healthChecks?.length && !spec.skipInitialHealthChecks) {
      const h = await waits.healthCheckNodes.executeWithOptions({ summary: `initial health checks on ${nodes.length} nodes` }, [
        { nodes, checks: fill(spec.healthChecks), maxWaitMs: 0 },
      ]);
      if (!h.passed) throw ApplicationFailure.nonRetryable(`initial health checks failed: ${h.failures.join('; ')}`, 'HealthCheckFailed');
    }
    this.c.concurrency = r.settings.concurrency;
    this.c.concurrency = this.effective(); // an edit that arrived while Pending wins
    this.st.concurrency = this.c.concurrency;
    return 'Initialised';
  }

  // ---- Initialised: the next batch fills the free slots (never more than `concurrency` nodes in
  // flight; it may have been lowered), or, with none left, the end once every node cycle is done.
  async nextBatch(): Promise<Next> {
    this.checkFailure();
    if (!this.c.queue.length && !this.c.held?.length) {
      if (!(await this.waitForCycles(() => this.c.active.length === 0))) return 'Initialised';
      return this.succeed();
    }
    if (this.c.active.length >= this.c.concurrency) {
      await this.waitForCycles(() => this.c.active.length < this.c.concurrency);
      return 'Initialised';
    }
    const nodes = await this.claimBatch(this.c.concurrency - this.c.active.length);
    if (!nodes.length) return this.c.budgetWait ? this.waitForBudget() : this.waitForHeld();
    this.phase('Initialised', '');
    this.c.batch = { nodes, replacements: [], toCordon: [], toStart: [] };
    upsertSearchAttributes([{ key: NodesAttr, value: fitting(nodes) }]);
    return 'ScalingUp';
  }

  /**
   * NM-7.5: the next `free` nodes of the queue that no NodeMaintenance holds, each claimed
   * (slipway.dev/cycled-by) before anything touches it; held nodes are set aside. A claimed node is
   * in flight: healing gives it back (claim removed, uncordoned).
   */
  private async claimBatch(free: number): Promise<string[]> {
    this.c.claims ??= patched('cycle-claims-nodes');
    if (!this.c.claims) return this.c.queue.splice(0, free);
    this.c.budgets ??= patched('node-disruption-budget');
    this.c.budgetWait = undefined;
    const batch: string[] = [];
    while (batch.length < free && this.c.queue.length) {
      let candidates = this.c.queue.splice(0, free - batch.length);
      if (this.c.budgets) candidates = await this.takeBudgetSlots(candidates);
      if (!candidates.length) break;
      const r = await act.claimNodes.executeWithOptions({ summary: `claim ${candidates.join(', ')}` }, [{ requestKey: this.key, nodes: candidates }]);
      for (const name of r.gone) this.done(name, 'node was removed by someone else');
      this.c.inFlight.push(...r.claimed);
      batch.push(...r.claimed);
      (this.c.held ??= []).push(...r.held);
      const notTaken = [...r.gone, ...r.held.map((h) => h.node)];
      if (this.c.budgets && notTaken.length) await this.releaseBudgetSlots(notTaken);
      if (this.c.budgetWait) break;
    }
    if (batch.length) this.c.heldTries = 0;
    return batch;
  }

  /**
   * Issue 15: a node enters a batch only with a slot in every NodeDisruptionBudget that selects it
   * (taken before the detach, so no replacement is bought for a node that would then wait). Nodes
   * without room go back to the front of the queue, their reason in their status; the request
   * holds a slot from here until the node is deleted (its cycle releases it) or healed.
   */
  private async takeBudgetSlots(candidates: string[]): Promise<string[]> {
    const r = await act.acquireDisruption.executeWithOptions({ summary: `disruption budget slots for ${candidates.join(', ')}` }, [{ holder: this.selfId, nodes: candidates }]);
    if (r.waiting.length) {
      this.c.queue.unshift(...r.waiting.map((w) => w.node));
      this.c.budgetWait = r.waiting[0]!.reason;
      for (const w of r.waiting) {
        const n = this.index.get(w.node);
        if (n && n.phase === 'Pending') n.message = w.reason;
      }
    }
    for (const name of r.granted) {
      const n = this.index.get(name);
      if (n && n.phase === 'Pending' && n.message?.startsWith('waiting for NodeDisruptionBudget')) n.message = undefined;
    }
    return r.granted;
  }

  private async releaseBudgetSlots(nodes: string[]): Promise<void> {
    await act.releaseDisruption.executeWithOptions({ summary: `release disruption budget slots of ${nodes.length} nodes` }, [{ holder: this.selfId, nodes }]);
  }

  /** No node could take a budget slot: say why, look again in 5 s (a freed slot is taken in arrival order). */
  private async waitForBudget(): Promise<Next> {
    if (this.c.budgetWait !== this.st.message) this.say(this.c.budgetWait!);
    await this.waitForCycles(() => false, BUDGET_RETRY_MS);
    return 'Initialised';
  }

  /**
   * NM-7.6: only nodes a NodeMaintenance holds are left (node cycles may still run): the request
   * stays in its phase, says whom it waits for, and tries them again after 5 s, backing off to 30 s.
   */
  private async waitForHeld(): Promise<Next> {
    const h = this.c.held![0]!;
    const message = `waiting for NodeMaintenance ${h.maintenance} (${h.stage}) on node ${h.node}`;
    if (message !== this.st.message) this.say(message);
    const tries = this.c.heldTries ?? 0;
    this.c.heldTries = tries + 1;
    await this.waitForCycles(() => false, heldRetryMs(tries));
    this.c.queue.unshift(...this.c.held!.map((x) => x.node));
    this.c.held = [];
    return 'Initialised';
  }

  // ---- ScalingUp: detach (the group replaces), then wait for Ready, healthy replacements.
  async scaleUp(): Promise<Next> {
    const { spec } = this.input;
    const r = this.c.resolved!;
    const batch = this.c.batch.nodes;
    this.phase('ScalingUp', `detaching ${batch.join(', ')}`);
    const since = Date.now();
    this.c.inFlight.push(...batch.filter((n) => !this.isInFlight(n))); // claimed nodes are in flight already
    const d = await act.detachNodes.executeWithOptions({ summary: `detach ${batch.length} nodes` }, [{ provider: r.provider, requestKey: this.key, nodes: batch.map((n) => this.node(n)) }]);
    for (const name of d.gone) this.done(name, 'node was removed by someone else');
    const rep = await waits.waitForReplacements.executeWithOptions({ summary: `wait for ${d.detached.length} replacement nodes` }, [{
      provider: r.provider,
      groups: r.groups,
      selector: spec.selector,
      known: [...this.st.nodes.map((n) => n.nodeName), ...this.c.replacements],
      sinceMs: since,
      needed: d.detached.length,
      healthChecks: fill(spec.healthChecks ?? []),
      timeoutMs: SCALE_UP_LIMIT_MS,
    }]);
    if (!rep.ready) throw ApplicationFailure.nonRetryable(rep.message, 'ScaleUpFailed');
    this.c.replacements.push(...rep.newNodes);
    await act.protectFromScaleDown.executeWithOptions({ summary: 'disable scale-down of the new nodes' }, [{ nodes: rep.newNodes, requestKey: this.key }]);
    const live = batch.filter((n) => this.isInFlight(n));
    Object.assign(this.c.batch, { replacements: rep.newNodes, toCordon: live, toStart: [...live] });
    // A copy: cordoning consumes toCordon (the same array as live), and an emptied list made the
    // release due at once, giving the new nodes back to cluster-autoscaler before the old were gone.
    this.c.releases.push({ nodes: patched('release-waits-for-batch') ? [...live] : live, newNodes: rep.newNodes });
    this.phase('CordoningNode', `replacements: ${rep.newNodes.join(', ')}`);
    return 'CordoningNode';
  }

  // ---- CordoningNode: cordon the batch, then the pre-termination checks (nodes in parallel, a chunk at a time).
  async cordonBatch(): Promise<Next> {
    const { spec } = this.input;
    const checks = spec.preTerminationChecks?.length && !spec.skipPreTerminationChecks ? spec.preTerminationChecks : [];
    while (this.c.batch.toCordon.length) {
      const chunk = this.c.batch.toCordon.slice(0, CHUNK).map((name) => this.node(name));
      await Promise.all(
        chunk.map(async (n) => {
          await act.cordonNode.executeWithOptions({ summary: `cordon ${n.name}` }, [n.name]);
          if (!checks.length) return;
          const c = await waits.preTerminationChecks.executeWithOptions({ summary: `pre-termination checks on ${n.name}` }, [
            { node: n, checks: checks.map((p) => ({ ...p, validStatusCodes: p.validStatusCodes ?? [200], healthCheck: fill([p.healthCheck])[0]! })) },
          ]);
          if (!c.passed) throw ApplicationFailure.nonRetryable(`pre-termination checks failed on ${n.name}: ${c.failures.join('; ')}`, 'PreTerminationCheckFailed');
        }),
      );
      this.c.batch.toCordon.splice(0, chunk.length);
      if (this.overBudget()) return 'CordoningNode';
    }
    const { toStart } = this.c.batch;
    this.phase('WaitingTermination', this.drainingMessage());
    return 'WaitingTermination';
  }

  // ---- WaitingTermination: one child per node (drain, delete, terminate), running on while the
  // next batch scales up (Cyclops: the next batch starts once at most concurrency/2 are active).
  async startCycles(): Promise<Next> {
    const { batch } = this.c;
    while (batch.toStart.length) {
      this.checkFailure();
      const chunk = batch.toStart.slice(0, CHUNK);
      await Promise.all(chunk.map((name) => this.startCycle(this.node(name))));
      batch.toStart.splice(0, chunk.length);
      if (this.overBudget()) return 'WaitingTermination';
    }
    const half = Math.floor(this.c.concurrency / 2);
    const done = await this.waitForCycles(() => this.c.active.length <= half || (!this.c.queue.length && !this.c.active.length));
    this.checkFailure();
    return done ? 'Initialised' : 'WaitingTermination';
  }

  private async startCycle(n: GroupNode): Promise<void> {
    const r = this.c.resolved!;
    this.c.active.push(n.name);
    const child = await startChild(cycleNodeWorkflow, {
      workflowId: nodeCycleWorkflowId(this.selfId, n.name),
      args: [{ parentId: this.selfId, node: n, provider: r.provider, settings: r.settings, drain: this.input.spec.drain, requester: cycleRequester(this.input.request.namespace, this.input.request.name) }],
      // Outlives this run when it continues as new; reports its end to the request's workflow ID.
      parentClosePolicy: ParentClosePolicy.ABANDON,
    });
    // This run also hears the child's result (the end report may be lost if the child is killed).
    child.result().then(
      (res) => {
        const cur = this.index.get(n.name);
        if (cur && res.returning && !cur.returning) cur.returning = res.returning;
        this.nodeCycled(n.name, res.message);
      },
      (err: Error & { cause?: Error }) => this.nodeFailed(n.name, err.cause?.message ?? err.message),
    );
  }

  /**
   * Waits until `done`, a node cycle failed, or the history is over budget (false). Meanwhile it lets
   * cluster-autoscaler manage a batch's new nodes again once the batch's old nodes are gone (#142).
   */
  private async waitForCycles(done: () => boolean, timeoutMs?: number): Promise<boolean> {
    for (;;) {
      const woke = () => done() || this.releaseDue() !== undefined || this.c.failure !== undefined || this.overBudget();
      if (timeoutMs === undefined) await condition(woke);
      else if (!(await condition(woke, timeoutMs))) return false;
      const due = this.releaseDue();
      if (due && this.c.failure === undefined) {
        await act.releaseScaleDown.executeWithOptions({ summary: 'release scale-down protection' }, [{ requestKey: this.key, nodes: due.newNodes }]);
        this.c.releases.splice(this.c.releases.indexOf(due), 1);
        continue;
      }
      return this.c.failure === undefined && done();
    }
  }

  private releaseDue() {
    return this.c.releases.find((r) => r.nodes.every((name) => this.index.get(name)?.phase === 'Successful'));
  }

  private async succeed(): Promise<Next> {
    if (this.c.budgets) await this.releaseBudgetSlots(this.st.nodes.map((n) => n.nodeName)); // anything a lost report left
    await this.locks.release();
    this.countCycled();
    this.phase('Successful', cycledMessage(this.st.nodes));
    this.st.completedAt = new Date().toISOString();
    return 'Successful';
  }

  // ---- Healing: stop the node cycles, put every node not terminated back (re-attached, uncordoned,
  // unmarked), lift scale-down protection, and only then release the node groups. Compensations run
  // even when the workflow itself is being cancelled.
  startHealing(err: unknown): void {
    const message = isCancellation(err) ? 'cancelled (the request was deleted)' : ((err as Error & { cause?: Error }).cause?.message ?? (err as Error).message);
    this.c.failureType = isCancellation(err) ? 'Cancelled' : err instanceof ApplicationFailure && err.type ? err.type : 'NodeCycleFailed';
    this.c.toCancel = [...this.c.active];
    this.c.cancelled = [...this.c.active];
    this.c.toHeal = [...this.c.inFlight];
    this.c.healMessage = message;
    this.c.step = 'Healing';
    this.phase('Healing', message);
  }

  async heal(): Promise<Next> {
    return CancellationScope.nonCancellable(async () => {
      if (!(await this.stopCycles())) return 'Healing';
      while (this.c.toHeal.length) {
        await this.healChunk(this.c.toHeal.slice(0, CHUNK));
        this.c.toHeal.splice(0, CHUNK);
        if (this.overBudget()) return 'Healing';
      }
      await act.releaseScaleDown.executeWithOptions({ summary: 'release scale-down protection' }, [{ requestKey: this.key }]);
      if (this.c.budgets) await this.releaseBudgetSlots(this.st.nodes.map((n) => n.nodeName)); // waiting entries too
      await this.locks.release(); // only now: another request must not take the group mid-healing
      this.phase('Failed');
      this.st.completedAt = new Date().toISOString();
      return 'Failed';
    });
  }

  /** Cancels the running node cycles and waits (bounded) for them to stop. False: over budget, go on in the next run. */
  private async stopCycles(): Promise<boolean> {
    while (this.c.toCancel.length) {
      const chunk = this.c.toCancel.slice(0, CHUNK);
      await Promise.all(chunk.map((name) => getExternalWorkflowHandle(nodeCycleWorkflowId(this.selfId, name)).cancel().catch(() => undefined)));
      this.c.toCancel.splice(0, chunk.length);
      if (this.overBudget()) return false;
    }
    await condition(() => this.c.active.length === 0 || this.overBudget(), STOP_LIMIT_MS);
    return this.c.active.length === 0 || !this.overBudget();
  }

  private async healChunk(names: string[]): Promise<void> {
    const r = this.c.resolved;
    const nodes = names.filter((n) => this.isInFlight(n)).map((n) => this.node(n));
    if (r) {
      const heal = await act.healNodes.executeWithOptions({ summary: `heal ${nodes.length} nodes` }, [{ provider: r.provider, requestKey: this.key, nodes }]);
      if (heal.reattached.length) this.st.message = `${this.st.message}; re-attached ${heal.reattached.join(', ')}`;
    }
    // healNodes uncordons before it drops the claim (NM-7.7); a run from before claims also
    // uncordons here (idempotent; a missing node is fine).
    if (!this.c.claims) await Promise.all(nodes.map((n) => act.uncordonNode.executeWithOptions({ summary: `uncordon ${n.name}` }, [n.name])));
    if (this.c.budgets && nodes.length) await this.releaseBudgetSlots(nodes.map((n) => n.name)); // uncordoned: no longer disrupted
    for (const n of nodes) {
      const phase = this.index.get(n.name)?.phase;
      if (phase !== 'Failed' || this.c.cancelled.includes(n.name)) this.mark(n.name, 'Failed', 'healed: back in its group, uncordoned');
    }
  }

  // ---- Node cycles' ends, from their reports or (same run) their results; the first word counts.

  private nodeCycled(name: string, message?: string): void {
    if (!this.c.active.includes(name)) return;
    this.c.active = this.c.active.filter((n) => n !== name);
    this.done(name, message);
  }

  /** A node is cycled (or gone): it leaves the carry. */
  private done(name: string, message?: string): void {
    this.c.inFlight = this.c.inFlight.filter((n) => n !== name);
    delete this.c.nodes[name];
    // The phase's message counts the nodes still draining: it must not stay at the batch's start value.
    if (this.st.phase === 'WaitingTermination') this.st.message = this.drainingMessage();
    this.mark(name, 'Successful', message);
  }

  private drainingMessage(): string {
    const n = this.c.batch.toStart.length + this.c.active.length;
    return n ? `${n} node${n === 1 ? '' : 's'} draining` : 'no node draining';
  }

  private node(name: string): GroupNode {
    return this.c.nodes[name]!;
  }

  private nodeFailed(name: string, failure: string): void {
    if (!this.c.active.includes(name)) return;
    this.c.active = this.c.active.filter((n) => n !== name);
    if (!this.c.cancelled.includes(name)) this.c.failure ??= failure;
  }

  private checkFailure(): void {
    if (this.c.failure !== undefined) throw ApplicationFailure.nonRetryable(`node cycle failed: ${this.c.failure}`, 'NodeCycleFailed');
  }

  private isInFlight(name: string): boolean {
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

  private async invalid(message: string): Promise<never> {
    await this.locks.release();
    this.phase('Failed', message);
    this.st.completedAt = new Date().toISOString();
    throw ApplicationFailure.nonRetryable(message, 'InvalidCycleRequest');
  }

  // ---- Reporting.

  /** A new message in the same phase (no search-attribute upsert). */
  private say(message: string): void {
    this.st.message = message;
    this.render();
  }

  private phase(p: CycleRequestPhase, message = this.st.message): void {
    upsertSearchAttributes([{ key: PhaseAttr, value: p }]);
    this.st.phase = p;
    this.st.message = message;
    this.render();
  }

  private mark(name: string, phase: 'Successful' | 'Failed', message?: string): void {
    const n = this.index.get(name);
    if (n) Object.assign(n, { phase, message });
    this.countCycled();
  }

  private countCycled(): void {
    this.st.nodesCycled = this.st.nodes.filter((x) => x.phase === 'Successful').length;
  }

  private render(): void {
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

/**
 * The first names that fit a search attribute value: Temporal terminates a workflow whose upsert
 * exceeds the limit (2 KiB by default), which a batch of a hundred long node names does.
 */
function fitting(names: string[], maxBytes = SEARCH_ATTRIBUTE_BYTES): string[] {
  let size = 2;
  const out: string[] = [];
  for (const n of names) {
    size += n.length + 3; // JSON-encoded; node names are DNS names (ASCII)
    if (size > maxBytes) break;
    out.push(n);
  }
  return out;
}

/** Defaults the CRD leaves to us (validStatusCodes). */
function fill<T extends { validStatusCodes?: number[] }>(checks: T[]): Array<T & { validStatusCodes: number[] }> {
  return checks.map((c) => ({ ...c, validStatusCodes: c.validStatusCodes?.length ? c.validStatusCodes : [200] }));
}
