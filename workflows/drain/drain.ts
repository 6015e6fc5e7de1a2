// The drain workflow: cordon, then evict the node's pods wave by wave, then wait for volumes to
// detach. Usable on its own or as a child of the cycle and maintenance workflows. Every side effect
// is an activity; this code only decides. A worker killed at any line resumes here from history,
// and the evict activity re-reads the pods before acting, so no pod is evicted twice.
//
// Phases, one handler each (the table below):
//   Pending → Cordoning → Draining (one pass per change) → WaitingForVolumeDetach → Drained; Failed.
// A drain finishes only on a fresh read of the node that shows nothing left to evict or wait for.
import {
  ActivityCancellationType,
  ApplicationFailure,
  CancellationScope,
  ContinueAsNew,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  setCurrentDetails,
  patched,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import type { DrainOptionsInput } from '../../api/drain-options.js';
import type { EvictResult } from '../../activities/drain/evict.js';
import type { ClassifyInput } from '../../activities/drain/snapshot.js';
import {
  drainDecisionsQuery,
  drainProgressSignal,
  drainStatusQuery,
  drainTargetsSignal,
  forceDeletePodSignal,
  retryNowSignal,
  skipPodSignal,
  type DrainReport,
  type DrainTargets,
  type PodTarget,
} from '../messages.js';
import { lowestUntargeted, nodeCounts } from './counts.js';
import { drainMarkdown, drainMessage, emptyStatus, FORCED_POD_EVENT_REASON, pdbNames, waveStatus, type DrainPhase, type DrainStatus, type ForcedAction } from './status.js';
import { podKey, truncate, UNREACHABLE_TERMINATING_SKIP_MS, type OperatorDecision, type DrainSettings, type DrainSnapshot, type NodeFacts, type PodRef, type PodVerdict } from '../../shared/drain.js';
import { planWave, type WavePlan } from './waves.js';
import { applyLocks, NO_LOCKS, type LockVerdict } from './locks.js';
import { EvacuationLedger, type EvacuationsCarry, type Requesting } from './evacuations.js';
import { ReturnsLedger, type ReturnsCarry, type ReturnsVerdict } from './returns.js';
import { latestOnly, whenSettled, type ProgressReporter } from '../progress.js';
import { NodesAttr, PhaseAttr } from '../search-attributes.js';
import { longSteps, steps } from '../proxies.js';
import { ownersText } from '../../api/lifecycle-hooks.js';
import { isCliDrainWorkflowId } from '../ids.js';
import { drainRequester } from '../../api/names.js';

const act = steps;
// Evictions heartbeat per pod; waits every 5 s.
const evictions = longSteps('10 minutes');
const waits = longSteps('10 minutes');
// A cancelled wave wait answers with the evictions it made before the cancel reached it; the
// drain waits for that answer (the SDK's effective default is TRY_CANCEL, which would drop it).
const waveWaits = longSteps('10 minutes', { cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED });

/** Longest single wait before the workflow looks again (status refresh, continue-as-new). */
const MAX_WINDOW_MS = 5 * 60_000;
const VOLUME_WINDOW_MS = 15_000;
/** Forced actions a report carries (the latest): more than can land between two reports. */
const FORCED_REPORTED = 20;
/** How often a CLI drain refused a NodeDisruptionBudget slot asks again. */
const BUDGET_RETRY_MS = 5_000;

/** An eviction the API refused (a PDB, a terminating namespace ...), since when and why. */
interface Refusal {
  uid: string;
  reason: string;
  sinceMs: number;
}

/** State carried across continue-as-new. */
export interface DrainCarry {
  status: DrainStatus;
  refused: Array<[string, Refusal]>;
  skipped: Array<[string, string]>;
  returns: ReturnsCarry;
  /** Operator signals received but not yet acted on (a signal may wake the pass that continues as new). */
  pending?: { skips: PodTarget[]; forceDeletes: PodTarget[] };
  locks?: LocksCarry;
  evacuations?: EvacuationsCarry;
  budget?: BudgetCarry;
}

/** A CLI drain's NodeDisruptionBudget slot (issue 15; patched 'cli-drain-budget'). */
interface BudgetCarry {
  /** This drain takes a slot (decided once, at its first ask). */
  on: boolean;
  /** It holds one: it may cordon. */
  slot: boolean;
  /** The ledger may name it (disrupted or waiting): released when the drain ends. */
  inLedger: boolean;
}

/** Dependency locks (NM-5.9–5.12) across passes: since when each provider is held, what was announced, the labels set. */
interface LocksCarry {
  /** uid → when the provider was first seen held (podEvictionTimeout with policy Fail counts from it). */
  heldSince: Array<[string, number]>;
  /** Event keys already recorded (a promotion per pod, a cycle per message). */
  announced: string[];
  /** Components whose maintenance-required label this drain has set on the node. */
  required: string[];
}

export interface DrainInput {
  nodeName: string;
  options?: DrainOptionsInput;
  carry?: DrainCarry;
  /** A workflow (e.g. a cycle request) that wants the drain's message whenever it changes. */
  reportTo?: string;
  /**
   * Targets mode (a NodeMaintenance's node coordinator): only pods matching a lane are drained; newer
   * targets arrive by `drainTargetsSignal`. At non-final targets the drain reports finished and waits
   * for more; at final targets it ends Drained. Absent: a whole-node drain, exactly as before.
   */
  targets?: DrainTargets;
  /** Who asks pods to leave, in the Evacuations this drain joins (NM-5.1, 5.8); default drain/<node>. */
  requester?: { name: string; reason?: string };
}

export interface DrainResult {
  status: DrainStatus;
}

type Step = Exclude<DrainPhase, 'Drained' | 'Failed'>;

/** The table of contents: one handler per phase, each returning the next phase. */
const PHASES: Record<Step, (d: Drain) => Promise<DrainPhase>> = {
  Pending: (d) => d.pending(),
  Cordoning: (d) => d.cordoning(),
  Draining: (d) => d.draining(),
  WaitingForVolumeDetach: (d) => d.waitingForVolumeDetach(),
};

export async function drainWorkflow(input: DrainInput): Promise<DrainResult> {
  const d = new Drain(input);
  // Every drain (CLI, cycle, maintenance) is found by node and phase in the Web UI. Patched:
  // drains that started before this change replay without these commands.
  d.searchable = patched('drain-search-attributes');
  d.upsertPhase([{ key: NodesAttr, value: [input.nodeName] }]);
  try {
    while (d.st.phase !== 'Drained') {
      const from = d.st.phase;
      d.st.phase = await PHASES[d.st.phase as Step](d);
      if (d.st.phase !== from) d.upsertPhase();
      if (d.st.phase === 'Drained' && d.st.targets) d.st.finished = true; // also a node gone: nothing is left on it
      d.publish();
      if (d.st.phase !== 'Drained' && workflowInfo().continueAsNewSuggested) {
        await d.flushReports(); // targets mode: the coordinator must not miss a finished report
        await continueAsNew<typeof drainWorkflow>(d.carry());
      }
    }
  } catch (err) {
    // Cancelled (a maintenance completed, NM-5.6): leave the Evacuations this drain joined.
    if (isCancellation(err)) await CancellationScope.nonCancellable(() => d.withdrawEvacuations());
    // Failed or cancelled: the CLI drain's budget slot goes back (not on continue-as-new: the next run holds it).
    if (!(err instanceof ContinueAsNew)) await CancellationScope.nonCancellable(() => d.releaseSlot());
    throw err;
  }
  await d.flushReports();
  await d.releaseSlot();
  return { status: d.st };
}

const ref = (p: PodRef): PodRef => ({ namespace: p.namespace, name: p.name, uid: p.uid });
/** Removes a pod's pending entries from a list of operator targets. */
function dropTarget(list: PodTarget[], t: PodTarget): void {
  for (let i = list.length - 1; i >= 0; i--) if (podKey(list[i]!) === podKey(t)) list.splice(i, 1);
}
/** The eviction answer means the pod is on its way out (or gone). */
const leavingOutcome = (r: EvictResult) => r.outcome === 'Evicted' || r.outcome === 'AlreadyTerminating' || r.outcome === 'Gone';
const COUNT_NONE = { skipped: new Set<string>(), refused: new Set<string>(), leaving: new Set<string>() };

/** One drain's state and its phase handlers. */
export class Drain {
  readonly st: DrainStatus;
  private readonly node: string;
  private readonly refused: Map<string, Refusal>;
  private readonly skipBySignal: Map<string, string>;
  private readonly returns: ReturnsLedger;
  private readonly forceDeletes: PodTarget[];
  private readonly newSkips: PodTarget[];
  /** Force-deletes being carried out now (a skip arriving meanwhile takes the pod out). */
  private readonly forcing: PodTarget[] = [];
  private readonly lockState: { heldSince: Map<string, number>; announced: Set<string>; required: string[] };
  /** This pass's dependency locks (locks.ts). */
  private locks: LockVerdict = NO_LOCKS;
  /** The pods the locks were judged on, by uid (for the Events about them). */
  private lockPods = new Map<string, PodVerdict>();
  /** Evacuations (evacuations.ts): pods that leave by an evacuator, not by eviction. */
  private readonly evac: EvacuationLedger;
  private wake = false;
  searchable = false;
  /** The latest read of the node, valid for the next step only. */
  private fresh?: DrainSnapshot;
  private settings?: DrainSettings;
  private reported = '';
  private readonly report?: { changed(): void; cancel(): void };
  private progress?: ProgressReporter;
  /** Targets mode: seq, finished and counts of the last report (these go out at once, not settled). */
  private reportedTargets = '';
  /** Targets mode: count-only changes wait for the settle timer (patched; undefined until first asked). */
  private countsSettle?: boolean;
  /** A CLI drain's NodeDisruptionBudget slot; `on` undefined until the first ask. */
  private readonly budget: { on?: boolean; slot: boolean; inLedger: boolean };
  /** DrainSnapshot.drainRulesSeen of the last classify (this run). */
  private rulesSeen?: string;
  /** `fresh` is a wave wait's look (its watched view), not a classify's read. */
  private freshFromWait = false;
  /** patched('wave-wait-classifies'), asked once. */
  private waitClassifies?: boolean;

  constructor(private readonly input: DrainInput) {
    this.node = input.nodeName;
    this.st = input.carry?.status ?? emptyStatus(input.nodeName);
    this.refused = new Map(input.carry?.refused ?? []);
    this.skipBySignal = new Map(input.carry?.skipped ?? []);
    this.returns = new ReturnsLedger(input.carry?.returns);
    this.newSkips = [...(input.carry?.pending?.skips ?? [])];
    this.forceDeletes = [...(input.carry?.pending?.forceDeletes ?? [])];
    const l = input.carry?.locks;
    this.evac = new EvacuationLedger(input.carry?.evacuations);
    this.budget = { slot: false, inLedger: false, ...input.carry?.budget };
    this.lockState = { heldSince: new Map(l?.heldSince ?? []), announced: new Set(l?.announced ?? []), required: l?.required ?? [] };
    if (input.targets && !(this.st.targets && this.st.targets.seq >= input.targets.seq)) this.st.targets = input.targets;
    this.listen();
    if (input.reportTo) {
      // The listener (a cycle) gets the message once it has held for 2 s: what blocks a drain is what
      // people need to see; passing states are not worth a signal. Best effort, never blocking.
      const listener = getExternalWorkflowHandle(input.reportTo);
      const progress = latestOnly(async () => listener.signal(drainProgressSignal, this.reportOf()));
      this.progress = progress;
      this.report = whenSettled(2000, () => progress.report());
    }
  }

  /** Messages: the status query and the operator's signals (each wakes a waiting pass). */
  private listen(): void {
    setHandler(drainStatusQuery, () => this.st);
    setHandler(drainDecisionsQuery, () => this.decisions());
    // For one pod the latest of skipPod and forceDeletePod wins: each drops the other's pending entry.
    setHandler(skipPodSignal, (t) => this.nudge(() => {
      dropTarget(this.forceDeletes, t);
      dropTarget(this.forcing, t);
      this.newSkips.push(t);
    }));
    setHandler(forceDeletePodSignal, (t) => this.nudge(() => {
      dropTarget(this.newSkips, t);
      this.forceDeletes.push(t);
    }));
    setHandler(retryNowSignal, () => this.nudge(() => undefined)); // the next wait retries refusals at once
    // Newer targets (never fewer lanes; the sender guarantees it): a stale or repeated seq is ignored,
    // and a whole-node drain stays one (it may have evicted untargeted pods already).
    setHandler(drainTargetsSignal, (t) => {
      if (!this.st.targets) return void log.warn('drainTargets signal ignored: this drain was started without targets', { seq: t.seq });
      if (t.seq <= this.st.targets.seq) return;
      this.nudge(() => {
        this.st.targets = t;
        this.st.finished = false; // until a pass at these targets shows nothing left
      });
    });
  }

  /**
   * The operator decisions accepted so far, by pod key (the drainDecisions query): the drain's
   * activities ask it before each eviction or deletion, so one accepted while they run is obeyed
   * by their next request, before the cancel reaches them (activities/drain/decisions.ts).
   */
  private decisions(): Record<string, OperatorDecision> {
    const d: Record<string, OperatorDecision> = {};
    for (const k of this.skipBySignal.keys()) d[k] = 'Skip';
    for (const t of [...this.forcing, ...this.forceDeletes]) d[podKey(t)] = 'ForceDelete';
    for (const t of this.newSkips) d[podKey(t)] = 'Skip'; // disjoint from the two above (the handlers)
    return d;
  }

  /** The progress signal's payload; targets mode adds the seq it answers, finished and the counts. */
  private reportOf(): DrainReport {
    const r: DrainReport = { nodeName: this.node, message: this.st.message, evicted: this.st.evicted };
    if (this.st.forced.length) r.forced = { total: this.st.forced.length, recent: this.st.forced.slice(-FORCED_REPORTED) };
    const t = this.st.targets;
    if (!t) return r;
    Object.assign(r, { targetsSeq: t.seq, finished: this.st.finished ?? false, counts: this.st.counts ?? nodeCounts([], COUNT_NONE), lowestUntargeted: this.st.lowestUntargeted, recordoned: this.st.recordoned });
    if (this.st.phase === 'Drained') Object.assign(r, { drained: true, volumeTimedOut: this.st.volumes?.timedOut ?? false });
    return r;
  }

  private nudge(f: () => unknown): void {
    f();
    this.wake = true;
  }

  // ---- Pending: read everything, refuse bad input, hold for invalid rules; nothing touched yet.
  async pending(): Promise<DrainPhase> {
    const snap = await this.classify();
    if (snap.errors.length) this.fail(snap.errors.join('; '), 'InvalidDrainInput');
    if (!snap.node.exists) {
      this.st.nodeGone = 'before';
      return 'Drained';
    }
    if (snap.heldBy.length) return this.hold(snap);
    this.st.heldBy = [];
    // Pre-drain lifecycle hooks: nothing is cordoned or evicted while one is on the node. Patched: a
    // drain that started before hooks existed never saw them (its recorded classify has none).
    if (snap.node.preDrainHooks?.length && patched('drain-pre-drain-hooks')) return this.holdForHooks(snap.node.preDrainHooks);
    delete this.st.hooks;
    if (!(await this.slotTaken())) {
      // Issue 15: a CLI drain cordons only with a NodeDisruptionBudget slot; it waits here, touching nothing.
      for (;;) {
        this.publish();
        await condition(() => this.wake, BUDGET_RETRY_MS);
        this.wake = false;
        if (workflowInfo().continueAsNewSuggested) return 'Pending'; // the next run asks again
        // Granted after a wait: read the node again (hooks, rules, pods) before the cordon.
        if (await this.slotTaken()) return 'Pending';
      }
    }
    this.st.startedAt ??= new Date().toISOString();
    this.fresh = snap;
    return 'Cordoning';
  }

  /**
   * A CLI drain (drain/<node>, no parent) holds a slot in every NodeDisruptionBudget selecting the
   * node from before its cordon to its end; a cycle's or a maintenance's drain is covered by theirs.
   * Asked once per call; true also for drains from before budgets (patched).
   */
  private async slotTaken(): Promise<boolean> {
    if (this.budget.slot || this.budget.on === false) return true;
    if (this.input.targets || this.input.reportTo || workflowInfo().parent || !isCliDrainWorkflowId(workflowInfo().workflowId)) return true;
    this.budget.on ??= patched('cli-drain-budget');
    if (!this.budget.on) return true;
    this.budget.inLedger = true; // before the ask: a cancel during it must still give back what it writes
    const r = await act.acquireDisruption.executeWithOptions({ summary: `disruption budget slot for ${this.node}` }, [{ holder: workflowInfo().workflowId, nodes: [this.node] }]);
    const refused = r.waiting.find((w) => w.node === this.node);
    if (refused) this.st.budgetWait = refused.reason;
    else delete this.st.budgetWait;
    this.budget.slot = !refused;
    return this.budget.slot;
  }

  /** The drain ended (any way but continue-as-new): its budget slot, or its place in the queue, goes back. */
  async releaseSlot(): Promise<void> {
    if (!this.budget.inLedger) return;
    await act.releaseDisruption.executeWithOptions({ summary: `release the budget slot of ${this.node}` }, [{ holder: workflowInfo().workflowId, nodes: [this.node] }]);
    this.budget.inLedger = false;
    this.budget.slot = false;
  }

  // ---- Cordoning: one patch (none when the node is cordoned already, e.g. by a cycle).
  async cordoning(): Promise<DrainPhase> {
    const snap = this.fresh;
    if (!snap?.node.cordoned) {
      await act.cordonNode.executeWithOptions({ summary: `cordon ${this.node}` }, [this.node]);
      // Targets mode: the coordinator cordoned the node before starting this drain, so someone uncordoned it.
      if (this.st.targets) this.st.recordoned = (this.st.recordoned ?? 0) + 1;
    }
    if (snap) this.fresh = { ...snap, node: { ...snap.node, cordoned: true } }; // read before the cordon
    return 'Draining';
  }

  // ---- Draining: one pass per change: read, obey signals, plan the wave, evict, wait.
  async draining(): Promise<DrainPhase> {
    const fromWait = this.fresh !== undefined && this.freshFromWait;
    this.freshFromWait = false;
    const snap = this.take() ?? (await this.classify());
    if (!snap.node.exists) {
      this.st.nodeGone = 'during'; // removed by someone else: nothing left to drain
      return 'Drained';
    }
    if (snap.heldBy.length) return this.hold(snap);
    this.st.heldBy = [];
    await this.keepCordoned(snap.node);
    if (await this.applySignals(snap)) return 'Draining'; // force-deleted: read again first
    this.returns.start(snap.pods);
    const returns = this.returns.judge(snap.pods, Date.now());
    const plan = this.planPass(snap, returns);
    await this.announceLocks();
    if (plan.done) {
      this.countPods(snap, []);
      if (this.st.targets) this.st.finished = true;
      if (this.st.targets && !this.st.targets.final) return this.awaitTargets(snap); // its wait lists the pods first
      // The drain leaves Draining only on a classify's own read, never on a wait's watched view.
      if (fromWait) return 'Draining';
      this.fresh = snap;
      return 'WaitingForVolumeDetach';
    }
    if (this.st.targets) this.st.finished = false;
    await this.evac.syncRequesters(this.requesting()); // NM-5.6: a maintenance that completed leaves
    const stay = await this.evac.pass(plan.toEvict.filter((p) => !this.locks.held.has(p.uid)), this.node, this.requesting());
    if (stay.length) {
      // NM-5.8: a DaemonSet or static pod whose evacuators all gave up is not evicted: kept, as without one.
      for (const p of stay) this.skipBySignal.set(podKey(p), `${p.podType} pod: no evacuator left; left for node shutdown`);
      return 'Draining';
    }
    const leaving = [...(await this.evictDue(plan, returns, snap.node)), ...this.evac.left];
    leaving.push(...(await this.applyTimeoutPolicy(snap)));
    this.showWave(plan, returns, snap);
    this.countPods(snap, [...leaving, ...this.evac.evacuating.keys()]);
    this.publish();
    await this.waitForWave(plan, returns, snap, leaving);
    return 'Draining';
  }

  /**
   * Targets mode, nothing targeted left at non-final targets: report finished, then wait for newer
   * targets (the signal cuts the wait), an operator signal, or a change on the node (a newcomer, an
   * uncordon, a DrainRule change): the wave wait with nothing leaving ends on exactly those.
   */
  private async awaitTargets(snap: DrainSnapshot): Promise<DrainPhase> {
    const t = this.st.targets!;
    this.publish();
    // This wait evicts nothing (no refusal to retry), so newer targets need not wait for its cancel to land.
    const steps = patched('await-targets-try-cancel') ? waits : waveWaits;
    await this.untilWoken(() =>
      steps.waitForWave.executeWithOptions({ summary: `finished at drain targets #${t.seq}: waiting for the next targets` }, [{
        nodeName: this.node,
        leaving: [],
        completion: [],
        refused: [],
        known: snap.pods.map((p) => p.uid),
        drainRulesSeen: snap.drainRulesSeen,
        concurrency: this.settings!.evictionConcurrency,
        qps: this.settings!.evictionQPS,
        timeoutMs: MAX_WINDOW_MS,
      }]),
    );
    return 'Draining';
  }

  /** Targets mode: the NM-1.7 counts for this pass (uids in `leaving` were just evicted or deleted). */
  private countPods(snap: DrainSnapshot, leaving: string[]): void {
    if (!this.st.targets) return;
    const held = snap.pods.filter((p) => this.locks.held.has(p.uid)).map(podKey);
    this.st.counts = nodeCounts(snap.pods, { skipped: new Set(this.skipBySignal.keys()), refused: new Set([...this.refused.keys(), ...held]), leaving: new Set(leaving) });
    this.st.lowestUntargeted = lowestUntargeted(snap.pods, new Set(this.skipBySignal.keys())) ?? null;
  }

  // ---- WaitingForVolumeDetach: until only the kept pods' volumes are attached (not on an unreachable node).
  async waitingForVolumeDetach(): Promise<DrainPhase> {
    const snap = this.take() ?? (await this.classify());
    const settings = this.settings!;
    if (!snap.node.exists) return 'Drained';
    if (snap.node.unreachable) {
      // No kubelet to unmount them: waiting could never end (Cluster API and Karpenter skip it too).
      this.st.volumes = { message: `not waited for: node ${this.node} is unreachable`, timedOut: false };
      return 'Drained';
    }
    this.countPods(snap, []);
    const kept = new Set([...this.skipBySignal.keys(), ...this.st.returning.map((r) => r.pod)]);
    // Skip (and Kept) pods stay, and so do pods no lane targets: their volumes are not waited for.
    const ignoredClaims = snap.pods.filter((p) => p.action === 'Skip' || p.targeted === false || kept.has(podKey(p))).flatMap((p) => p.claims);
    const deadline = settings.volumeDetachTimeoutMs !== undefined ? Date.now() + settings.volumeDetachTimeoutMs : Infinity;
    // The first look returns at once, so status shows what is attached before any waiting.
    for (let first = true; ; first = false) {
      const windowMs = Math.min(first ? 0 : VOLUME_WINDOW_MS, deadline - Date.now());
      if (windowMs < 0 || (windowMs === 0 && !first)) {
        this.st.volumes = { message: `${this.st.volumes?.message ?? 'volumes still attached'}\n(volumeDetachTimeout reached; continuing)`, timedOut: true };
        return 'Drained';
      }
      const wait = () => waits.waitForVolumeDetach.executeWithOptions({ summary: `wait for volumes to detach from ${this.node}` }, [
        { nodeName: this.node, ignoredClaims, windowMs },
      ]);
      // Targets mode: newer targets (a signal) send the drain back to look at the pods again.
      const v = this.st.targets ? await this.untilWoken(wait) : await wait();
      if (this.st.targets && !this.st.finished) return 'Draining';
      if (!v) continue;
      // The kubelet died while we waited: as above, nothing will unmount them.
      if (v.unreachable) {
        this.st.volumes = { message: `not waited for: node ${this.node} is unreachable`, timedOut: false };
        return 'Drained';
      }
      this.st.volumes = { message: v.message, timedOut: false };
      this.publish();
      if (v.detached) return 'Drained';
    }
  }

  // ---- Steps of a pass.

  private take(): DrainSnapshot | undefined {
    const s = this.fresh;
    this.fresh = undefined;
    return s;
  }

  private async classify(): Promise<DrainSnapshot> {
    return this.looked(await act.classifyPods.executeWithOptions({ summary: `classify the pods on ${this.node}` }, [this.classifyInput()]));
  }

  /** What a look at the node's pods needs: the targets, and the rules this drain judged by last (while unchanged, the worker's cache answers). */
  private classifyInput(): ClassifyInput {
    const t = this.st.targets;
    const seen = this.rulesSeen ? { drainRulesSeen: this.rulesSeen } : {};
    return { nodeName: this.node, options: this.input.options, ...(t ? { targets: t.lanes } : {}), ...seen };
  }

  private looked(snap: DrainSnapshot): DrainSnapshot {
    this.settings = snap.settings ?? this.settings;
    this.rulesSeen = snap.drainRulesSeen ?? this.rulesSeen;
    return snap;
  }

  /** An invalid DrainRule could decide about these pods: touch nothing until it changes (or a signal). */
  private async hold(snap: DrainSnapshot): Promise<DrainPhase> {
    this.st.heldBy = snap.heldBy;
    this.publish();
    const summary = `held by ${snap.heldBy.length === 1 ? 'an invalid DrainRule' : `${snap.heldBy.length} invalid DrainRules`}: waiting for a fix or deletion`;
    await this.untilWoken(() => waits.waitForDrainRuleChange.executeWithOptions({ summary }, [{ timeoutMs: MAX_WINDOW_MS, since: snap.drainRulesSeen }]));
    return this.st.phase;
  }

  /** Pre-drain hooks on the node: touch nothing until their owners remove them (or a signal), then read again. */
  private async holdForHooks(owners: string[]): Promise<DrainPhase> {
    this.st.hooks = owners;
    this.publish();
    const summary = `waiting for pre-drain hooks: ${ownersText(owners)}`;
    await this.untilWoken(() => waits.waitForLifecycleHooks.executeWithOptions({ summary }, [{ nodeName: this.node, stage: 'pre-drain', timeoutMs: MAX_WINDOW_MS }]));
    return this.st.phase;
  }

  /** Uncordoned mid-drain (kubectl uncordon, a re-registered Node): cordon again, or replacements land back here. */
  private async keepCordoned(node: NodeFacts): Promise<void> {
    if (node.cordoned) return;
    if (!this.st.warnings.some((w) => w.pod === '' && w.warning.startsWith('node was uncordoned'))) {
      this.st.warnings.push({ pod: '', warning: 'node was uncordoned during the drain; cordoned again' });
    }
    await act.cordonNode.executeWithOptions({ summary: `cordon ${this.node} again (uncordoned mid-drain)` }, [this.node]);
    this.st.recordoned = (this.st.recordoned ?? 0) + 1; // a maintenance's coordinator reports it (UncordonReverted)
  }

  /** Operator signals: skips and force-deletes, each recorded in status and as an Event. True: pods were deleted. */
  private async applySignals(snap: DrainSnapshot): Promise<boolean> {
    const onNode = new Map(snap.pods.map((p) => [podKey(p), p]));
    const find = (t: PodTarget, what: string) => {
      const pod = onNode.get(podKey(t));
      if (!pod) log.warn(`${what}: pod is not on the node`, { pod: podKey(t) });
      return pod;
    };
    for (const t of this.newSkips.splice(0)) {
      const pod = find(t, 'skipPod');
      if (!pod) continue;
      if (pod.terminating) {
        // Its eviction went out before the signal was seen: say so rather than report it kept.
        this.st.warnings.push({ pod: podKey(pod), warning: `skipPod arrived after the pod's eviction; it is leaving` });
        continue;
      }
      this.skipBySignal.set(podKey(t), t.reason ?? 'skipped by operator');
      this.refused.delete(podKey(t));
      await this.evac.withdrawPod(this.requesting(), pod.uid); // NM-5.7: skipPod beats evacuation
      await this.recordForced(pod, 'Skip', 'signal', t.reason ?? 'skipped by operator', t.requestedBy);
    }
    const forced = this.forceDeletes.splice(0).flatMap((t) => {
      const pod = find(t, 'forceDeletePod');
      return pod ? [{ t, pod, reason: t.reason ?? 'force-deleted by operator', requestedBy: t.requestedBy }] : [];
    });
    if (!forced.length) return false;
    this.forcing.push(...forced.map((f) => f.t));
    const results = await act.deletePods.executeWithOptions({ summary: `force-delete ${forced.map((f) => podKey(f.pod)).join(', ')}` }, [
      { nodeName: this.node, pods: forced.map((f) => ref(f.pod)), gracePeriodSeconds: 0, forced: true },
    ]);
    this.forcing.length = 0;
    // Not sent: a skipPod for the pod came after the force (the latest wins); the next pass applies it.
    const notSent = new Set(results.filter((r) => r.outcome === 'Withdrawn').map((r) => r.uid));
    for (const f of forced) {
      if (notSent.has(f.pod.uid)) continue;
      this.refused.delete(podKey(f.pod));
      await this.recordForced(f.pod, 'ForceDelete', 'signal', f.reason, f.requestedBy);
    }
    return true;
  }

  /** The wave of this pass; pods that keep coming back are left out of it (returns.ts). */
  private planPass(snap: DrainSnapshot, returns: ReturnsVerdict): WavePlan {
    this.st.returning = snap.pods.filter((p) => returns.left.has(p.uid)).map((p) => ({ pod: podKey(p), reason: returns.left.get(p.uid)! }));
    // Untargeted pods (targets mode) are not part of any wave: left alone, never waited for.
    const considered = snap.pods.filter((p) => !returns.left.has(p.uid));
    const skipped = new Set(this.skipBySignal.keys());
    // Dependency locks: providers held, the pods they wait for promoted into the wave (locks.ts).
    const { plan, locks } = applyLocks(planWave(considered.filter((p) => p.targeted !== false), { skipped }), considered, snap.node.locks, skipped);
    this.locks = locks;
    this.lockPods = new Map(considered.map((p) => [p.uid, p]));
    const now = Date.now();
    for (const uid of [...this.lockState.heldSince.keys()]) if (!locks.held.has(uid)) this.lockState.heldSince.delete(uid);
    for (const uid of locks.held.keys()) if (!this.lockState.heldSince.has(uid)) this.lockState.heldSince.set(uid, now);
    const wave = this.st.wave;
    if (wave && (plan.done || plan.order !== wave.order) && !this.st.completedWaves.includes(wave.order)) this.st.completedWaves.push(wave.order);
    if (plan.done) {
      this.st.wave = undefined;
      Object.assign(this.st, waveStatus(plan, new Map(), this.skipBySignal));
    }
    // Forget refusals of pods that are no longer waiting for eviction.
    const evictable = new Set(plan.toEvict.filter((p) => !locks.held.has(p.uid)).map(podKey));
    for (const k of [...this.refused.keys()]) if (!evictable.has(k)) this.refused.delete(k);
    return plan;
  }

  /** Evicts the wave's pods not yet tried (refusals are retried by the wait), deletes finished ones. Returns uids now leaving. */
  private async evictDue(plan: WavePlan, returns: ReturnsVerdict, node: NodeFacts): Promise<string[]> {
    const leaving = plan.terminating.map((p) => p.uid);
    const due = plan.toEvict.filter((p) => !this.refused.has(podKey(p)) && !returns.paused.has(p.uid) && !this.locks.held.has(p.uid) && !this.evac.spared(p));
    if (due.length) {
      const results: EvictResult[] = await evictions.evictPods.executeWithOptions({ summary: `evict ${due.length} pods (wave ${plan.order})` }, [{
        nodeName: this.node,
        pods: due.map(ref),
        gracePeriodSeconds: node.unreachable ? 1 : undefined, // no kubelet to honour a longer one
        concurrency: this.settings!.evictionConcurrency,
        qps: this.settings!.evictionQPS,
      }]);
      leaving.push(...this.account(results, due));
      const refusedNow = results.filter((r) => !leavingOutcome(r) && r.outcome !== 'NotTried' && r.outcome !== 'Withdrawn');
      await this.evac.refused(Object.fromEntries(refusedNow.map((r) => [r.uid, 1])));
    }
    if (plan.toDelete.length) {
      const results = await act.deletePods.executeWithOptions({ summary: `delete ${plan.toDelete.length} finished pods` }, [{ nodeName: this.node, pods: plan.toDelete.map(ref) }]);
      leaving.push(...results.filter((r) => r.outcome !== 'Withdrawn').map((r) => r.uid));
    }
    return leaving;
  }

  /**
   * Dependency locks, told: a Warning Event on each promoted pod and for each cycle (once each), and
   * the node's maintenance-required labels set to the components whose provider is held (NM-5.10, 5.11).
   */
  private async announceLocks(): Promise<void> {
    for (const { pod, message } of this.locks.promoted) {
      if (!this.st.warnings.some((w) => w.pod === podKey(pod) && w.warning === message)) this.st.warnings.push({ pod: podKey(pod), warning: message });
      await this.podEventOnce(pod, 'DrainPromotedPod', message);
    }
    for (const message of this.locks.cycles) {
      const uid = [...this.locks.held].find(([, m]) => m === message)![0];
      if (!this.st.warnings.some((w) => w.warning === message)) this.st.warnings.push({ pod: '', warning: message });
      await this.podEventOnce(this.lockPods.get(uid)!, 'DependencyCycle', message);
    }
    await this.setRequired(this.locks.required);
  }

  private async podEventOnce(pod: PodVerdict, reason: string, message: string): Promise<void> {
    const key = `${pod.uid}/${reason}`;
    if (this.lockState.announced.has(key)) return;
    this.lockState.announced.add(key);
    await act.recordEvent.executeWithOptions({ summary: `event on ${podKey(pod)}: ${reason}` }, [{
      involved: { kind: 'Pod', apiVersion: 'v1', namespace: pod.namespace, name: pod.name, uid: pod.uid },
      type: 'Warning',
      reason,
      message: `Slipway drain of node ${this.node}: ${message}`,
      dedupKey: `${workflowInfo().workflowId}/${key}`,
    }]);
  }

  /** Who this drain asks pods to leave for, in the Evacuations it joins. */
  private requesting(): Requesting {
    // Targets mode: the maintenances draining the node now (they change as they join and complete).
    const list = this.st.targets?.requesters?.length ? this.st.targets.requesters : [this.input.requester ?? { name: drainRequester(this.node) }];
    const [first, ...rest] = list;
    return {
      requester: first!.name,
      ...(first!.reason !== undefined ? { reason: first!.reason } : {}),
      ...(rest.length ? { alsoRequesters: rest } : {}),
      progressDeadlineSeconds: this.settings?.evacuationProgressDeadlineSeconds ?? 1800,
    };
  }

  /** NM-5.6: leaves every Evacuation it joined (on cancellation). */
  async withdrawEvacuations(): Promise<void> {
    await this.evac.withdrawAll(this.requesting());
  }

  /** The node's maintenance-required labels, written only when the set changes. */
  private async setRequired(components: string[]): Promise<void> {
    if (components.join(',') === this.lockState.required.join(',')) return;
    await act.setMaintenanceRequired.executeWithOptions({ summary: components.length ? `label ${this.node} maintenance-required: ${components.join(', ')}` : `remove maintenance-required labels from ${this.node}` }, [
      { nodeName: this.node, components },
    ]);
    this.lockState.required = components;
  }

  /** Books eviction answers: counts, refusals (kept since their first), returns. Returns the uids leaving. */
  private account(results: EvictResult[], pods: PodVerdict[]): string[] {
    const now = Date.now();
    const byUid = new Map(pods.map((p) => [p.uid, p]));
    const leaving: string[] = [];
    for (const r of results) {
      const k = podKey(r);
      if (r.outcome === 'NotTried' || r.outcome === 'Withdrawn') continue; // not sent (an operator decision came first): the next pass decides
      if (leavingOutcome(r)) {
        if (r.outcome === 'Evicted') this.st.evicted++;
        if (r.outcome !== 'Gone') leaving.push(r.uid);
        this.refused.delete(k);
        const pod = byUid.get(r.uid);
        if (pod && r.outcome === 'Evicted') this.returns.record([pod], now);
      } else {
        this.refused.set(k, { uid: r.uid, reason: r.reason ?? r.outcome, sinceMs: this.refused.get(k)?.sinceMs ?? now });
      }
    }
    return leaving;
  }

  /** The escape hatch for evictions refused longer than podEvictionTimeout. Returns uids it deleted. */
  private async applyTimeoutPolicy(snap: DrainSnapshot): Promise<string[]> {
    const { podEvictionTimeoutMs: timeoutMs, podEvictionTimeoutPolicy: policy } = this.settings!;
    if (timeoutMs === undefined || policy === 'Wait') return [];
    const now = Date.now();
    const expired = [...this.refused.entries()].filter(([, b]) => now - b.sinceMs >= timeoutMs);
    // A lock-held provider is never deleted by a policy (NM-5.12), but Fail may end the drain over it.
    const heldTooLong = policy === 'Fail' ? [...this.lockState.heldSince].filter(([, since]) => now - since >= timeoutMs) : [];
    if (policy === 'Fail' && (expired.length || heldTooLong.length)) {
      const names = new Map(snap.pods.map((p) => [p.uid, podKey(p)]));
      const why = [...expired.map(([k, b]) => `${k}: ${b.reason}`), ...heldTooLong.map(([uid]) => `${names.get(uid) ?? uid}: ${this.locks.held.get(uid) ?? 'held by a dependency lock'}`)];
      if (heldTooLong.length) await this.setRequired([]); // the drain gives up: dependents need not act any more
      this.fail(`eviction refused for longer than podEvictionTimeout (${timeoutMs / 1000}s): ${why.join('; ')}`, 'PodEvictionTimeout');
    }
    if (!expired.length) return [];
    const onNode = new Map(snap.pods.map((p) => [podKey(p), p]));
    const pods = expired.map(([k]) => onNode.get(k)).filter((p): p is PodVerdict => p !== undefined);
    // Grace period honoured. A pod the operator skipped or force-deletes meanwhile is not deleted (Withdrawn).
    const results = await act.deletePods.executeWithOptions({ summary: `delete ${pods.length} pods after podEvictionTimeout` }, [{ nodeName: this.node, pods: pods.map(ref) }]);
    const withdrawn = new Set(results.filter((r) => r.outcome === 'Withdrawn').map((r) => r.uid));
    const deleted = pods.filter((p) => !withdrawn.has(p.uid));
    for (const p of deleted) {
      const reason = `eviction refused for longer than ${timeoutMs / 1000}s: ${this.refused.get(podKey(p))!.reason}`;
      this.refused.delete(podKey(p));
      await this.recordForced(p, 'DeleteAfterTimeout', 'policy', reason);
    }
    return deleted.map((p) => p.uid);
  }

  /** The wave, its refusals and pauses, and pod warnings, into status. */
  private showWave(plan: WavePlan, returns: ReturnsVerdict, snap: DrainSnapshot): void {
    for (const p of snap.pods) {
      for (const w of p.warnings) {
        if (!this.st.warnings.some((x) => x.pod === podKey(p) && x.warning === w)) this.st.warnings.push({ pod: podKey(p), warning: w });
      }
    }
    const reasons = new Map([...this.refused].map(([k, b]) => [k, b.reason]));
    for (const p of plan.toEvict) if (returns.paused.has(p.uid)) reasons.set(podKey(p), returns.paused.get(p.uid)!.reason);
    for (const p of plan.toEvict) if (this.locks.held.has(p.uid)) reasons.set(podKey(p), this.locks.held.get(p.uid)!);
    Object.assign(this.st, waveStatus(plan, reasons, this.skipBySignal));
    // NM-5.4: a pod an evacuator moves is active, reported with the evacuator's own words.
    const evacuating = [...this.evac.evacuating.values()];
    if (this.st.wave && evacuating.length) {
      const moving = new Set(evacuating.map((e) => e.pod));
      this.st.wave.evicting = this.st.wave.evicting.filter((k) => !moving.has(k));
      this.st.wave.evacuating = evacuating.map((e) => ({ pod: e.pod, message: e.message })).sort((a, b) => (a.pod < b.pod ? -1 : 1));
    }
  }

  /**
   * Waits for the wave to leave, a WaitCompleted pod to finish, a newcomer, a refused eviction to go
   * through (retried inside the activity), the next policy deadline or pause, or a signal.
   */
  private async waitForWave(plan: WavePlan, returns: ReturnsVerdict, snap: DrainSnapshot, leaving: string[]): Promise<void> {
    const now = Date.now();
    const refused = plan.toEvict.filter((p) => this.refused.has(podKey(p)));
    // Pods holding implicit locks count as completions: the provider may go once one has left.
    const completion = [...new Set([...plan.waitingCompletion.map((p) => p.uid), ...this.locks.holders, ...this.evac.evacuating.keys()])];
    const held = [...this.locks.held.values()];
    const { podEvictionTimeoutMs: timeoutMs, podEvictionTimeoutPolicy: policy } = this.settings!;
    // Fail also ends the drain over a provider held too long (NM-5.12): wake for it as for a refusal.
    const heldSince = policy === 'Fail' ? [...this.lockState.heldSince.values()] : [];
    const nextPolicy = timeoutMs !== undefined && policy !== 'Wait' ? Math.min(...[...this.refused.values()].map((b) => b.sinceMs), ...heldSince) + timeoutMs : Infinity;
    const nextPause = Math.min(...[...returns.paused.values()].map((p) => p.atMs));
    // Unreachable node: pods that cannot finish terminating are left after UNREACHABLE_TERMINATING_SKIP_MS; look again then.
    const nextUnreachable = snap.node.unreachable && leaving.length ? now + UNREACHABLE_TERMINATING_SKIP_MS + 1000 : Infinity;
    const windowMs = Math.max(0, Math.min(nextPolicy, nextPause, nextUnreachable, this.evac.nextLookMs(now), now + MAX_WINDOW_MS) - now);
    if (!leaving.length && !completion.length && !refused.length && !held.length) {
      // Nothing to watch: look again at once, or after the pause for pods that came back.
      if (Number.isFinite(nextPause) && !this.wake) await condition(() => this.wake, windowMs, { summary: 'pause before evicting pods that came back' });
      this.wake = false;
      return;
    }
    const summary = waitSummary(plan, refused.map((p) => this.refused.get(podKey(p))!.reason), leaving.length, completion.length, held);
    // The wait ends with the next pass's look at the pods (histories from before replay without it).
    const classify = (this.waitClassifies ??= patched('wave-wait-classifies')) ? { classify: this.classifyInput() } : {};
    const seq = this.st.targets?.seq;
    const r = await this.untilWoken(() =>
      (patched('wave-wait-answers-cancel') ? waveWaits : waits).waitForWave.executeWithOptions({ summary }, [{
        nodeName: this.node,
        leaving,
        completion,
        refused: refused.map(ref),
        known: snap.pods.map((p) => p.uid),
        drainRulesSeen: snap.drainRulesSeen,
        ...(held.length ? { nodeLocks: snap.node.locks ?? {} } : {}),
        nodeUnreachable: snap.node.unreachable,
        gracePeriodSeconds: snap.node.unreachable ? 1 : undefined,
        concurrency: this.settings!.evictionConcurrency,
        qps: this.settings!.evictionQPS,
        timeoutMs: windowMs,
        endsAt: now + windowMs,
        ...classify,
      }]),
    );
    if (!r) return;
    // Taken at the targets it was asked with: newer targets need a look of their own.
    if (r.snapshot && this.st.targets?.seq === seq) {
      this.fresh = this.looked(r.snapshot);
      this.freshFromWait = true;
    }
    this.account(r.evicted, refused);
    await this.evac.refused(r.refusedTimes ?? {});
    for (const x of r.refusals) {
      const b = this.refused.get(podKey(x));
      if (b) b.reason = x.reason ?? x.outcome;
    }
  }

  /**
   * Runs a wait that a signal may cut short. The cut waits for the activity's own answer
   * (cancellation type WAIT_CANCELLATION_COMPLETED, the default): the wave wait then reports the
   * evictions it made before the cancel reached it, so none goes uncounted. Undefined: cancelled
   * with nothing to report.
   */
  private async untilWoken<T>(wait: () => Promise<T>): Promise<T | undefined> {
    if (this.wake) {
      this.wake = false;
      return undefined;
    }
    const scope = new CancellationScope();
    const waiting = scope.run(wait).then((v) => ({ v }), (err: unknown) => ({ err }));
    let done = await Promise.race([waiting, condition(() => this.wake).then(() => undefined)]);
    if (done === undefined) {
      scope.cancel();
      done = await waiting;
    }
    this.wake = false;
    if ('err' in done) {
      if (isCancellation(done.err)) return undefined;
      throw done.err;
    }
    return done.v;
  }

  // ---- Reporting.

  publish(): void {
    this.st.message = drainMessage(this.st);
    setCurrentDetails(drainMarkdown(this.st));
    if (this.report && this.st.targets) {
      // Targets mode: the coordinator advances on what this key holds, so a change goes out at once.
      // Counts feed only status: since 'drain-counts-settle' they wait for the settle timer like the message.
      const counts = (this.countsSettle ??= patched('drain-counts-settle')) ? [] : [this.st.counts ?? null];
      const key = JSON.stringify([this.st.targets.seq, this.st.finished ?? false, ...counts, this.st.phase === 'Drained', this.st.lowestUntargeted ?? null, this.st.recordoned ?? 0, this.st.forced.length]);
      if (key !== this.reportedTargets) {
        this.reportedTargets = key;
        this.reported = this.shown();
        this.report.cancel();
        this.progress!.report();
        return;
      }
    }
    const shown = this.shown();
    if (this.report && shown !== this.reported) {
      this.reported = shown;
      this.report.changed();
    }
  }

  /** What the settle timer reports a change of: the message, and in targets mode since 'drain-counts-settle' the counts. */
  private shown(): string {
    // A forced action is reported even when the message stays the same (its owner records it: issue 24.9).
    return JSON.stringify([this.st.message, this.countsSettle ? (this.st.counts ?? null) : null, this.st.forced.length]);
  }

  /** SlipwayPhase (and any other attributes given) for drains that carry search attributes. */
  upsertPhase(more: SearchAttributeUpdatePair[] = []): void {
    if (this.searchable) upsertSearchAttributes([...more, { key: PhaseAttr, value: this.st.phase }]);
  }

  private fail(message: string, type: string): never {
    this.st.phase = 'Failed';
    this.upsertPhase();
    this.st.message = message;
    setCurrentDetails(`**Drain ${this.node}: Failed**\n\n${message}`);
    throw ApplicationFailure.nonRetryable(message, type);
  }

  private async recordForced(pod: PodVerdict, action: ForcedAction['action'], by: ForcedAction['by'], reason: string, requestedBy?: string): Promise<void> {
    this.st.forced.push({ pod: podKey(pod), action, by, ...(requestedBy ? { requestedBy } : {}), at: new Date().toISOString(), reason });
    await act.recordEvent.executeWithOptions({ summary: `event on ${podKey(pod)}: ${action}` }, [{
      involved: { kind: 'Pod', apiVersion: 'v1', namespace: pod.namespace, name: pod.name, uid: pod.uid },
      type: 'Warning',
      reason: FORCED_POD_EVENT_REASON[action],
      message: `Slipway drain of node ${this.node}: ${action} by ${by}${requestedBy ? ` from ${requestedBy}` : ''}: ${reason}`,
      dedupKey: `${workflowInfo().workflowId}/${pod.uid}/${action}`,
    }]);
  }

  /** Targets mode, before the run closes (end or continue-as-new): the last report is sent. Whole-node drains do not wait (their histories replay unchanged). */
  async flushReports(): Promise<void> {
    if (this.st.targets && this.progress) await this.progress.flush();
  }

  /** The next run's input (continue-as-new). */
  carry(): DrainInput {
    const carry: DrainCarry = {
      status: this.st,
      refused: [...this.refused],
      skipped: [...this.skipBySignal],
      returns: this.returns.carry(),
      pending: { skips: this.newSkips, forceDeletes: this.forceDeletes },
      locks: { heldSince: [...this.lockState.heldSince], announced: [...this.lockState.announced], required: this.lockState.required },
      evacuations: this.evac.carry(),
      ...(this.budget.on !== undefined ? { budget: { on: this.budget.on, slot: this.budget.slot, inLedger: this.budget.inLedger } } : {}),
    };
    const next: DrainInput = { nodeName: this.node, options: this.input.options, reportTo: this.input.reportTo, carry, ...(this.input.requester ? { requester: this.input.requester } : {}) };
    if (this.st.targets) next.targets = this.st.targets;
    return next;
  }
}

/** What the Web UI's pending activity says while the wave is out: the PDB that blocks it, first. */
function waitSummary(plan: WavePlan, refusals: string[], leaving: number, completion: number, held: string[] = []): string {
  const wave = `(wave ${plan.order})`;
  if (held.length && !refusals.length) {
    const first = held[0]!.length > 120 ? `${held[0]!.slice(0, 117)}...` : held[0]!;
    return `${held.length} pod${held.length === 1 ? '' : 's'} ${first}${held.length > 1 ? ' ...' : ''} ${wave}`;
  }
  if (refusals.length) {
    const pdbs = [...new Set(refusals.flatMap(pdbNames))];
    const by = pdbs.length ? `PDB ${truncate(pdbs, 2)}` : truncate([...new Set(refusals)], 1);
    return `blocked by ${by}: retrying eviction of ${refusals.length} pod${refusals.length === 1 ? '' : 's'} ${wave}`;
  }
  const parts = [leaving ? `${leaving} pod${leaving === 1 ? '' : 's'} to leave` : '', completion ? `${completion} to complete` : ''].filter(Boolean);
  return `wait for ${parts.join(' and ')} ${wave}`;
}
