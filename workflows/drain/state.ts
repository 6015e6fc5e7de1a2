// One drain's state (class Drain): what it carries across continue-as-new, the messages it answers
// (listen), what it tells its listener and the Web UI (publish), and the next run's input (carry).
// The phase handlers that act on it live beside it, one file per phase group (drain.ts, PHASES).
import {
  ApplicationFailure,
  getExternalWorkflowHandle,
  log,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import type { DrainOptionsInput } from '../../api/drain-options.js';
import type { EvictResult } from '../../activities/drain/evict.js';
import {
  drainDecisionsQuery,
  drainProgressSignal,
  drainStatusQuery,
  drainTargetsSignal,
  holderAdvancedSignal,
  forceDeletePodSignal,
  retryNowSignal,
  skipPodSignal,
  type DrainReport,
  type DrainTargets,
  type PodTarget,
} from '../messages.js';
import { nodeCounts } from './counts.js';
import { acceptTargets, applyAdvance, reachedHere, reportStanding } from './handover.js';
import type { Lane } from '../../api/drain-plan.js';
import { drainMarkdown, drainMessage, emptyStatus, type DrainStatus } from './status.js';
import { podKey, type OperatorDecision, type DrainSettings, type DrainSnapshot, type PodRef, type PodVerdict } from '../../shared/drain.js';
import { NO_LOCKS, type LockVerdict } from './locks.js';
import { EvacuationLedger, type EvacuationsCarry, type Requesting } from './evacuations.js';
import { drainRequester } from '../../api/names.js';
import { ReturnsLedger, type ReturnsCarry } from './returns.js';
import { latestOnly, whenSettled, type ProgressReporter } from '../progress.js';
import { PhaseAttr } from '../search-attributes.js';

/** Forced actions a report carries (the latest): more than can land between two reports. */
const FORCED_REPORTED = 20;

/** An eviction the API refused (a PDB, a terminating namespace ...), since when and why. */
export interface Refusal {
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

/** A CLI drain's NodeDisruptionBudget slot (issue 15). */
export interface BudgetCarry {
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

/** Removes a pod's pending entries from a list of operator targets. */
function dropTarget(list: PodTarget[], t: PodTarget): void {
  for (let i = list.length - 1; i >= 0; i--) if (podKey(list[i]!) === podKey(t)) list.splice(i, 1);
}
/** The eviction answer means the pod is on its way out (or gone). */
export const leavingOutcome = (r: EvictResult) => r.outcome === 'Evicted' || r.outcome === 'AlreadyTerminating' || r.outcome === 'Gone';
export const ref = (p: PodRef): PodRef => ({ namespace: p.namespace, name: p.name, uid: p.uid });
const COUNT_NONE = { skipped: new Set<string>(), refused: new Set<string>(), leaving: new Set<string>() };

/** One drain's state; its phase handlers are functions of it (pending.ts, pass.ts, wait.ts, volumes.ts). */
export class Drain {
  readonly st: DrainStatus;
  readonly node: string;
  readonly refused: Map<string, Refusal>;
  readonly skipBySignal: Map<string, string>;
  readonly returns: ReturnsLedger;
  readonly forceDeletes: PodTarget[];
  readonly newSkips: PodTarget[];
  /** Force-deletes being carried out now (a skip arriving meanwhile takes the pod out). */
  readonly forcing: PodTarget[] = [];
  readonly lockState: { heldSince: Map<string, number>; announced: Set<string>; required: string[] };
  /** This pass's dependency locks (locks.ts). */
  locks: LockVerdict = NO_LOCKS;
  /** The pods the locks were judged on, by uid (for the Events about them). */
  lockPods = new Map<string, PodVerdict>();
  /** Evacuations (evacuations.ts): pods that leave by an evacuator, not by eviction. */
  readonly evac: EvacuationLedger;
  /** A signal arrived: the current wait ends (wait.ts, untilWoken). */
  wake = false;
  /** The latest read of the node, valid for the next step only. */
  fresh?: DrainSnapshot;
  /** `fresh` is a wave wait's look (its watched view), not a classify's read. */
  freshFromWait = false;
  /** Targets mode: a classify taken ahead, at the targets the holders' next entries would give (handover.ts). */
  ahead?: { lanes: Lane[]; snap: DrainSnapshot };
  settings?: DrainSettings;
  /** DrainSnapshot.drainRulesSeen of the last classify (this run). */
  rulesSeen?: string;
  /** A CLI drain's NodeDisruptionBudget slot (budget.ts). */
  readonly budget: BudgetCarry;
  private reported = '';
  private readonly report?: { changed(): void; cancel(): void };
  private progress?: ProgressReporter;
  /** Targets mode: seq, finished and counts of the last report (these go out at once, not settled). */
  private reportedTargets = '';

  constructor(readonly input: DrainInput) {
    this.node = input.nodeName;
    this.st = input.carry?.status ?? emptyStatus(input.nodeName);
    this.refused = new Map(input.carry?.refused ?? []);
    this.skipBySignal = new Map(input.carry?.skipped ?? []);
    this.returns = new ReturnsLedger(input.carry?.returns);
    this.newSkips = [...(input.carry?.pending?.skips ?? [])];
    this.forceDeletes = [...(input.carry?.pending?.forceDeletes ?? [])];
    const l = input.carry?.locks;
    this.evac = new EvacuationLedger(input.carry?.evacuations);
    const b = input.carry?.budget;
    this.budget = { slot: b?.slot ?? false, inLedger: b?.inLedger ?? false };
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
      if (acceptTargets(this, t)) this.nudge(() => (this.st.finished = false)); // until a pass at these targets shows nothing left
      else this.publish(); // the same lanes (an advance applied here already): the report answers the new seq
    });
    // Issue 26 §5: a maintenance moved on; applied here as the coordinator would (handover.ts).
    setHandler(holderAdvancedSignal, (a) => {
      if (applyAdvance(this, a)) this.nudge(() => (this.st.finished = false));
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
    Object.assign(r, { targetsSeq: t.seq, lanes: t.lanes, finished: this.st.finished ?? false, counts: this.st.counts ?? nodeCounts([], COUNT_NONE), lowestUntargeted: this.st.lowestUntargeted, recordoned: this.st.recordoned });
    const reached = reachedHere(this);
    if (reached) r.reached = reached;
    if (this.st.phase === 'Drained') Object.assign(r, { drained: true, volumeTimedOut: this.st.volumes?.timedOut ?? false });
    return r;
  }

  private nudge(f: () => unknown): void {
    f();
    this.wake = true;
  }

  /** Books eviction answers: counts, refusals (kept since their first), returns. Returns the uids leaving. */
  account(results: EvictResult[], pods: PodVerdict[]): string[] {
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

  /** Who this drain asks pods to leave for, in the Evacuations it joins. */
  requesting(): Requesting {
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

  // ---- Reporting.

  publish(): void {
    this.st.message = drainMessage(this.st);
    setCurrentDetails(drainMarkdown(this.st));
    if (this.st.targets) reportStanding(this);
    if (this.report && this.st.targets) {
      // Targets mode: the coordinator advances on what this key holds, so a change goes out at once.
      // Counts feed only status: they wait for the settle timer like the message.
      const key = JSON.stringify([this.st.targets.seq, this.st.finished ?? false, this.st.phase === 'Drained', this.st.lowestUntargeted ?? null, this.st.recordoned ?? 0, this.st.forced.length]);
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

  /** What the settle timer reports a change of: the message, the counts (targets mode), the forced actions. */
  private shown(): string {
    // A forced action is reported even when the message stays the same (its owner records it: issue 24.9).
    return JSON.stringify([this.st.message, this.st.counts ?? null, this.st.forced.length]);
  }

  /** SlipwayPhase (and any other attributes given). */
  upsertPhase(more: SearchAttributeUpdatePair[] = []): void {
    upsertSearchAttributes([...more, { key: PhaseAttr, value: this.st.phase }]);
  }

  fail(message: string, type: string): never {
    this.st.phase = 'Failed';
    this.upsertPhase();
    this.st.message = message;
    setCurrentDetails(`**Drain ${this.node}: Failed**\n\n${message}`);
    throw ApplicationFailure.nonRetryable(message, type);
  }

  /** Targets mode, before the run closes (end or continue-as-new): the last report is sent. Whole-node drains do not wait. */
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
      budget: { ...this.budget },
    };
    const next: DrainInput = { nodeName: this.node, options: this.input.options, reportTo: this.input.reportTo, carry, ...(this.input.requester ? { requester: this.input.requester } : {}) };
    if (this.st.targets) next.targets = this.st.targets;
    return next;
  }
}
