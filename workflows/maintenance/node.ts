// The node coordinator (ID nm-node/<node>): one per node that any maintenance holds, and the only
// writer of that node's maintenance state. Maintenances register (an upsert carrying their stage,
// plan and position) and release; the coordinator cordons, publishes the Node's label and
// annotations, computes the drain targets T(N) from every holder (targets.ts), hands them to its
// drain (the drain engine in targets mode, ID nm-node/<node>/drain), and reports to each holder.
// It ends after the last release, having restored the node (uncordoned unless it was cordoned
// before the first holder, spec NM-2.9c).
//
// One pass per change: Holding → (Retargeting) → Reporting; Releasing once nobody holds the node.
// Issue 15: before its first cordon write the coordinator takes a NodeDisruptionBudget slot (holder:
// its own workflow ID, stable across continue-as-new); while refused it writes nothing, tells its
// holders why and waits for a budget to change (waitForDisruption); the slot goes back after the
// restoring write.
//
// Issue 26: idle costs nothing. Besides messages, the loop wakes only for what a long watch activity
// returns (the node uncordoned, a claim, the node gone; the budget wait above), each renewed at most
// every 20 minutes, so a held node's history grows with what changes, not with time.
import {
  CancellationScope,
  ParentClosePolicy,
  WorkflowIdReusePolicy,
  condition,
  continueAsNew,
  isCancellation,
  getExternalWorkflowHandle,
  log,
  setCurrentDetails,
  setHandler,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { entryString, type Lane } from '../../api/drain-plan.js';
import type { DrainOptionsInput } from '../../api/drain-options.js';
import { maintenanceDrainWorkflowId, maintenanceEventRef, parseWorkflowId } from '../ids.js';
import {
  drainProgressSignal,
  drainTargetsSignal,
  nodeMaintenanceStateQuery,
  nodeReportSignal,
  registerHolderSignal,
  releaseHolderSignal,
  retryNowSignal,
  type DrainReport,
} from '../messages.js';
import { steps, WATCH_WINDOW_MS, watchSteps } from '../proxies.js';
import { NodesAttr, PhaseAttr } from '../search-attributes.js';
import { drainWorkflow } from '../drain/drain.js';
import { FORCED_OBJECT_EVENT_REASON, forcedLine, freshForced } from '../drain/status.js';
import { maintenanceRequester } from '../../api/evacuation.js';
import { fastForwardMessage, fastForwardedBy, limitedBy, limiting, nodeLevelMessage, updateTargets, type FastForward, type NodeTargetsState } from './targets.js';
import type { HolderInfo, NodeCounts, NodeReport } from './types.js';
import type { NodeWatchInput } from '../../activities/maintenance/watch.js';
import type { AcquireResult } from '../../activities/budget/index.js';

/** Count-only changes reach a holder at most this often (its status, not its plan, depends on them). */
const COUNTS_PERIOD_MS = 2_000;
/** The waits: they return at the latest after 20 minutes (RENEW_MS), so half an hour bounds them. */
const waits = watchSteps('30 minutes');
/** The latest forced actions a holder's status shows for the node. */
const FORCED_SHOWN = 5;
/** UncordonReverted at most once per node per 10 minutes. */
const REVERT_EVENT_PERIOD_MS = 10 * 60_000;

export interface NodeCoordinatorInput {
  node: string;
  holders: HolderInfo[];
  /** Carried across continue-as-new. */
  targets?: NodeTargetsState;
  seq?: number;
  drainStarted?: boolean;
  /** The Evacuation requesters last sent to the drain (JSON). */
  requestersSent?: string;
  drainReport?: DrainReport;
  drainFailed?: string;
  recordonedSeen?: number;
  /** The drain's forced actions already recorded on the holders, and the lines their status shows (issue 24.9). */
  forcedSeen?: number;
  forcedLines?: string[];
  released?: string[];
  /** NodeDisruptionBudget: this coordinator holds a slot; it has an entry in the ledger. */
  slot?: boolean;
  inLedger?: boolean;
}

const ZERO: NodeCounts = { podsPendingEvictionRequest: 0, activeEvictionRequests: 0, podsBlocked: 0, podsKept: 0 };

export async function maintenanceNodeWorkflow(input: NodeCoordinatorInput): Promise<void> {
  const c = new Coordinator(input);
  upsertSearchAttributes([{ key: NodesAttr, value: [input.node] }]);
  for (;;) {
    // Only messages and the watches' answers wake it; and counts that send() held back.
    if (c.countsDueMs === undefined) await condition(() => c.dirty);
    else await condition(() => c.dirty, Math.max(10, c.countsDueMs - Date.now()));
    c.dirty = false;
    c.countsDueMs = undefined;
    if (!c.holders.size) {
      await c.releasing();
      if (!c.holders.size) return; // a register that raced the release makes this run go on
      continue;
    }
    if (!(await c.slotTaken())) {
      // Not cordoned, nothing written: a release is done at once, and the holders hear why.
      await c.acknowledgeReleases(c.releasesInEffect());
      await c.reporting();
      if (workflowInfo().continueAsNewSuggested) await continueAsNew<typeof maintenanceNodeWorkflow>(c.carry());
      continue;
    }
    const letGo = c.releasesInEffect(); // before the write: a release that lands during it is not on the node yet
    if (c.cordonedBefore()) {
      // A running drain and the holders need the new targets now: the node write goes beside them,
      // after the targets are decided, so it shows them: one write per change, not two.
      const look = c.takeLook();
      await Promise.all([c.advancing(), c.holding(look)]);
      await c.acknowledgeReleases(letGo); // the node no longer names them
    } else {
      c.takeLook();
      await c.holding(true); // cordoned before any drain starts
      await c.acknowledgeReleases(letGo);
      await c.advancing();
    }
    c.watchNode();
    if (workflowInfo().continueAsNewSuggested) await continueAsNew<typeof maintenanceNodeWorkflow>(c.carry());
  }
}

class Coordinator {
  readonly node: string;
  readonly holders: Map<string, HolderInfo>;
  dirty = true;
  private targets?: NodeTargetsState;
  private final = false;
  private seq: number;
  private drainStarted: boolean;
  /** The requesters last sent to the drain (JSON), to send them again when they change (NM-5.6). */
  private requestersSent?: string;
  private drainReport?: DrainReport;
  private gone = false;
  /** Why the last drain failed (it ended; the node stays cordoned). */
  private drainFailed?: string;
  /** The CycleNodeRequest that claimed the node (NM-7.7): no cordon, no drain; looked at again every pass. */
  private claimedBy?: string;
  /** Holders whose release is done but not yet acknowledged to them. */
  private released: Set<string>;
  private lastRevertEventMs = -Infinity;
  /** The drain's re-cordon count already turned into an UncordonReverted Event. */
  private recordonedSeen = 0;
  /** How many of the current drain's forced actions are recorded on the holders (Events), and their lines for status. */
  private forcedSeen: number;
  private forcedLines: string[];
  private phase: string | undefined;
  private reportedTo = new Map<string, string>();
  /** When the node was last written (count-only changes are held back for COUNTS_PERIOD_MS after it). */
  private lookedAtMs = -Infinity;
  /** The node watch returned: the next write is made even if nothing changed (it re-cordons, NM-2.5). */
  private lookDue = false;
  /** The running node watch (what it expects), or the budget wait (the refusal it was asked with). */
  private nodeWatch?: { key: string; scope: CancellationScope };
  private slotWait?: { previous?: string; scope: CancellationScope; answer?: AcquireResult };
  /** Set by send() when a count-only report was held back: the pass that sends it. */
  countsDueMs?: number;
  private sentAt = new Map<string, { planKey: string; ms: number }>();
  /** The last node write without its counts. */
  private writtenMain?: string;
  /** The last node state written (this run): an unchanged one is not written again until the periodic look. */
  private written?: string;
  /** A slot is held: the node may be cordoned (kept until the restoring write). */
  private slot: boolean;
  /** The ledger may name this coordinator for the node (disrupted or waiting): released with the node. */
  private inLedger: boolean;
  /** The refusal while no slot is held. */
  private budgetWait?: string;

  constructor(input: NodeCoordinatorInput) {
    this.node = input.node;
    this.holders = new Map(input.holders.map((h) => [h.id, h]));
    this.targets = input.targets;
    this.seq = input.seq ?? 0;
    this.drainStarted = input.drainStarted ?? false;
    this.requestersSent = input.requestersSent;
    this.drainReport = input.drainReport;
    this.drainFailed = input.drainFailed;
    this.recordonedSeen = input.recordonedSeen ?? 0;
    this.forcedSeen = input.forcedSeen ?? 0;
    this.forcedLines = input.forcedLines ?? [];
    this.released = new Set(input.released ?? []);
    this.slot = input.slot ?? false;
    this.inLedger = input.inLedger ?? false;
    setHandler(registerHolderSignal, (h) => {
      this.holders.set(h.id, h);
      this.released.delete(h.id);
      this.dirty = true;
    });
    setHandler(releaseHolderSignal, ({ id }) => {
      this.holders.delete(id);
      this.released.add(id);
      this.dirty = true;
    });
    // retryNow to the coordinator: a failed drain starts again; a running one retries its refusals now.
    setHandler(retryNowSignal, () => {
      if (this.drainFailed) {
        this.drainFailed = undefined;
        this.dirty = true;
      } else if (this.drainStarted) {
        void getExternalWorkflowHandle(maintenanceDrainWorkflowId(this.node)).signal(retryNowSignal).catch(() => undefined);
      }
    });
    setHandler(drainProgressSignal, (r) => {
      this.drainReport = r;
      this.dirty = true;
    });
    setHandler(nodeMaintenanceStateQuery, () => ({
      node: this.node,
      holders: [...this.holders.values()],
      lanes: this.targets?.lanes ?? [],
      final: this.final,
      seq: this.seq,
      drain: this.drainReport,
    }));
  }

  private covering(): HolderInfo[] {
    return [...this.holders.values()].filter((h) => h.stage === 'Drain');
  }

  private state(): 'Cordoned' | 'Draining' | 'Drained' {
    if (!this.covering().length) return 'Cordoned';
    return this.drainReport?.drained && this.drainReport.targetsSeq === this.seq ? 'Drained' : 'Draining';
  }

  /** The node state differs from the last write in its counts only, written under COUNTS_PERIOD_MS ago. */
  private countsOnly(input: { status: Record<string, unknown> }): boolean {
    const { drainTargets, drainMessage, limitedBy, reason } = input.status;
    const main = JSON.stringify({ ...input, status: { drainTargets, drainMessage, limitedBy, reason } });
    if (this.heldBack(this.writtenMain, this.lookedAtMs, main)) return true;
    this.writtenMain = main;
    return false;
  }

  /**
   * A change of counts only (the rest, `key`, as last sent at `lastMs`) waits until COUNTS_PERIOD_MS
   * after that send; the pass that sends it is scheduled then.
   */
  private heldBack(lastKey: string | undefined, lastMs: number, key: string): boolean {
    if (key !== lastKey || Date.now() - lastMs >= COUNTS_PERIOD_MS) return false;
    this.countsDueMs = Math.min(this.countsDueMs ?? Infinity, lastMs + COUNTS_PERIOD_MS);
    return true;
  }

  /**
   * Issue 15: the node may be cordoned only with a slot in every NodeDisruptionBudget selecting it.
   * Asked before the first write; while refused, waitForDisruption asks again whenever a budget
   * changes and answers when the slot is granted or the refusal reads differently (a message that
   * wakes the loop meanwhile only refreshes the reports).
   */
  async slotTaken(): Promise<boolean> {
    if (this.slot) return true;
    const answer = this.slotWait?.answer;
    let r: AcquireResult;
    if (answer) {
      this.slotWait = undefined;
      r = answer;
    } else if (this.slotWait) return false; // still waiting
    else {
      this.inLedger = true; // before the ask: a release during it must still give back what it writes
      r = await steps.acquireDisruption.executeWithOptions({ summary: `disruption budget slot for ${this.node}` }, [{ holder: workflowInfo().workflowId, nodes: [this.node] }]);
    }
    const refused = r.waiting.find((w) => w.node === this.node);
    this.budgetWait = refused?.reason;
    this.slot = !refused;
    if (refused) this.waitForSlot(refused.reason);
    return this.slot;
  }

  /** The budget wait, in the background: its answer wakes the loop. */
  private waitForSlot(previous: string): void {
    const scope = new CancellationScope();
    const w: NonNullable<Coordinator['slotWait']> = { previous, scope };
    this.slotWait = w;
    const ask = { holder: workflowInfo().workflowId, nodes: [this.node], refusals: { [this.node]: previous }, timeoutMs: WATCH_WINDOW_MS };
    scope
      .run(() => waits.waitForDisruption.executeWithOptions({ summary: `wait for a disruption budget slot for ${this.node}` }, [ask]))
      .then(
        (r) => {
          if (this.slotWait !== w) return;
          w.answer = r;
          this.dirty = true;
        },
        () => {
          if (this.slotWait === w) this.slotWait = undefined; // cancelled (released); or failed: asked again on the next pass
        },
      );
  }

  /** Whether this pass's write is a look (forced even when nothing changed): once per watch return. */
  takeLook(): boolean {
    const look = this.lookDue;
    this.lookDue = false;
    return look;
  }

  /**
   * NM-2.5 and NM-7.7 without a poll: a watch of the node, expecting it as the last write left it,
   * returns when that no longer holds (uncordoned, held-by gone, a claim came or went, the node went
   * or came back) or at its renewal; then the next pass looks. Re-armed only when what it expects changes.
   */
  watchNode(): void {
    const want: NodeWatchInput | undefined = this.written === undefined && !this.gone && !this.claimedBy ? undefined : { node: this.node, exists: !this.gone, held: !this.gone && !this.claimedBy, ...(this.claimedBy ? { claimedBy: this.claimedBy } : {}) };
    const key = JSON.stringify(want ?? null);
    if (this.nodeWatch?.key === key) return;
    this.stopWatch();
    if (!want) return;
    const scope = new CancellationScope();
    const w = { key, scope };
    this.nodeWatch = w;
    scope
      .run(() => waits.watchMaintenanceNode.executeWithOptions({ summary: `watch ${this.node}` }, [want]))
      .then(
        () => {
          if (this.nodeWatch !== w) return;
          this.nodeWatch = undefined;
          this.lookDue = true;
          this.dirty = true;
        },
        () => undefined, // cancelled: a newer watch replaced it
      );
  }

  private stopWatch(): void {
    this.nodeWatch?.scope.cancel();
    this.nodeWatch = undefined;
  }

  /** A drain ran on this node, so this coordinator cordoned it already. */
  cordonedBefore(): boolean {
    return this.drainStarted;
  }

  /** Targets to the drain, then reports to the holders. */
  async advancing(): Promise<void> {
    await this.retargeting();
    await this.reporting();
  }

  // ---- Holding: the Node shows who holds it, cordoned; an uncordon by anyone is reverted.
  /** `look`: write even when nothing changed (the node watch returned: it reverts an uncordon by someone else). */
  async holding(look: boolean): Promise<void> {
    const lim = limiting([...this.holders.values()]);
    const status = {
      drainTargets: this.targets?.lanes ?? [],
      drainMessage: nodeLevelMessage([...this.holders.values()], this.state() === 'Drained'),
      ...(this.drainReport?.counts ?? ZERO),
      limitedBy: lim && this.covering().length >= 2 ? [lim.name] : [],
      reason: [...new Set([...this.holders.values()].map((h) => h.reason).filter(Boolean))].join('; '),
    };
    const holders = [...new Set([...this.holders.values()].map((h) => h.name))];
    const input = { node: this.node, holders, state: this.state(), status };
    const key = JSON.stringify(input);
    if (!look && key === this.written) return; // the node shows it already
    if (!look && this.countsOnly(input)) return; // held back: the next pass writes them
    this.lookedAtMs = Date.now(); // every write reads the node first (and re-cordons it)
    const r = await steps.writeMaintenanceNodeState.executeWithOptions({ summary: `hold ${this.node} for ${holders.join(', ')}` }, [input]);
    this.written = key;
    // What the write found (the node gone, a cycle's claim) changes the reports: another pass sends them.
    if (this.gone !== !r.exists || this.claimedBy !== r.claimedBy) this.dirty = true;
    this.gone = !r.exists;
    this.claimedBy = r.claimedBy;
    if (r.reverted) await this.uncordonReverted(holders);
  }

  private async uncordonReverted(holders: string[]): Promise<void> {
    const now = Date.now();
    if (now - this.lastRevertEventMs < REVERT_EVENT_PERIOD_MS) return;
    this.lastRevertEventMs = now;
    const slot = Math.floor(now / REVERT_EVENT_PERIOD_MS);
    const message = `node ${this.node} was uncordoned while held by NodeMaintenance ${holders.join(', ')}; cordoned again`;
    await steps.recordEvent.executeWithOptions({ summary: 'event UncordonReverted on the node' }, [
      { involved: { kind: 'Node', apiVersion: 'v1', name: this.node }, type: 'Warning', reason: 'UncordonReverted', message, dedupKey: `${this.node}/uncordon/${slot}` },
    ]);
    for (const h of this.holders.values()) {
      await steps.recordEvent.executeWithOptions({ summary: `event UncordonReverted on ${h.name}` }, [
        { involved: maintenanceRef(h), type: 'Warning', reason: 'UncordonReverted', message, dedupKey: `${h.id}/${this.node}/uncordon/${slot}` },
      ]);
    }
  }

  // ---- Retargeting: T(N) from every covering holder; the drain gets them (started on first need).
  async retargeting(): Promise<void> {
    if (this.gone || this.claimedBy) return; // once the cycle lets go, targets start as for a node that just joined (A5)
    const holders = [...this.holders.values()];
    const next = updateTargets(this.targets, holders);
    this.targets = next.state;
    for (const f of next.fastForwarded) await this.fastForward(f);
    // NM-5.6: the drain's Evacuation requesters follow the maintenances that cover the node.
    const requesters = this.covering().map((h) => ({ name: maintenanceRequester(h.name), ...(h.reason ? { reason: h.reason } : {}) }));
    const requestersChanged = this.drainStarted && JSON.stringify(requesters) !== this.requestersSent;
    if (!next.changed && next.final === this.final && !requestersChanged && (this.drainStarted || !this.covering().length || this.drainFailed)) return;
    this.final = next.final;
    if (!this.covering().length) return; // Cordon-stage holders only: no drain (A6); targets cleared by the planner
    this.seq++;
    const targets = { lanes: next.state.lanes, final: next.final, seq: this.seq, requesters };
    this.requestersSent = JSON.stringify(requesters);
    const id = maintenanceDrainWorkflowId(this.node);
    if (!this.drainStarted) {
      const first = holders.find((h) => h.stage === 'Drain');
      // The oldest draining maintenance is the requester of the Evacuations the drain joins (NM-5.1, 5.8).
      const requester = first ? { name: maintenanceRequester(first.name), ...(first.reason ? { reason: first.reason } : {}) } : undefined;
      const child = await startChild(drainWorkflow, {
        workflowId: id,
        args: [{ nodeName: this.node, options: first?.drain, reportTo: workflowInfo().workflowId, targets, ...(requester ? { requester } : {}) }],
        // The drain outlives this run (continue-as-new) and reports to the coordinator's ID.
        parentClosePolicy: ParentClosePolicy.ABANDON,
        workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
        staticSummary: `drain ${this.node} to ${lanesText(targets.lanes)}`,
      });
      this.drainStarted = true;
      this.drainFailed = undefined;
      this.recordonedSeen = 0; // a new drain counts from zero
      this.forcedSeen = 0; // and the last report's actions were the old drain's
      if (this.drainReport?.forced) this.drainReport = { ...this.drainReport, forced: undefined };
      // A drain that fails (podEvictionTimeout policy Fail, NM-7.4) ends; its holders are told, the node
      // stays cordoned, and new targets (or the next change) start a new drain.
      child.result().then(
        () => undefined,
        (err: unknown) => {
          if (isCancellation(err)) return;
          this.drainFailed = (err as { cause?: { message?: string } }).cause?.message ?? String(err);
          this.drainStarted = false;
          this.dirty = true;
        },
      );
      return;
    }
    await getExternalWorkflowHandle(id)
      .signal(drainTargetsSignal, targets)
      .catch((err: unknown) => {
        // The drain ended (Drained at final targets): start a new one for the new targets.
        log.info('drain not running; starting it again', { node: this.node, err: String(err) });
        this.drainStarted = false;
        this.seq--;
        this.dirty = true;
      });
  }

  private async fastForward(ff: FastForward): Promise<void> {
    const h = this.holders.get(ff.holder);
    if (!h) return;
    await steps.recordEvent.executeWithOptions({ summary: `event FastForwarded on ${h.name}` }, [
      { involved: maintenanceRef(h), type: 'Warning', reason: 'FastForwarded', message: fastForwardMessage(this.node, ff, h), dedupKey: `${h.id}/${this.node}/fast-forward` },
    ]);
  }

  /**
   * Issue 24.9: a pod the drain skipped or deleted instead of evicting is recorded on each maintenance
   * draining the node (every holder if none is in Drain any more): a Warning Event naming the pod, the
   * node, who asked and why, and a line in its status for the node.
   */
  private async recordForced(): Promise<void> {
    const fresh = freshForced(this.drainReport?.forced, this.forcedSeen);
    if (!fresh.length) return;
    const to = this.covering().length ? this.covering() : [...this.holders.values()];
    for (const f of fresh) {
      const message = forcedLine(this.node, f);
      for (const h of to) {
        await steps.recordEvent.executeWithOptions({ summary: `event ${FORCED_OBJECT_EVENT_REASON[f.action]} on ${h.name}` }, [
          { involved: maintenanceRef(h), type: 'Warning', reason: FORCED_OBJECT_EVENT_REASON[f.action], message, dedupKey: `${h.id}/${this.node}/${f.action}/${f.pod}/${f.at}` },
        ]);
      }
      this.forcedLines = [...this.forcedLines, `* ${message}`].slice(-FORCED_SHOWN);
    }
    this.forcedSeen = this.drainReport!.forced!.total;
  }

  // ---- Reporting: each holder hears T(N), whether the node is finished and drained, and the counts.
  async reporting(): Promise<void> {
    await this.recordForced();
    const lim = limiting([...this.holders.values()]);
    const d = this.drainReport && this.drainReport.targetsSeq === this.seq ? this.drainReport : undefined;
    const phase = this.budgetWait !== undefined ? 'WaitingForBudget' : this.state();
    if (phase !== this.phase) {
      this.phase = phase;
      upsertSearchAttributes([{ key: PhaseAttr, value: phase }]);
    }
    setCurrentDetails(this.details(lim?.name));
    const sends: Array<Promise<void>> = [];
    for (const h of this.holders.values()) {
      const report: NodeReport = {
        node: this.node,
        seq: this.seq,
        lanes: this.targets?.lanes ?? [],
        finished: this.gone || (!!d?.finished && h.stage === 'Drain'),
        drained: this.gone || (!!d?.drained && this.final && h.stage === 'Drain'),
        volumeTimedOut: d?.volumeTimedOut,
        gone: this.gone,
        ...(this.claimedBy && !this.gone ? { claimedBy: this.claimedBy } : {}),
        released: false,
        counts: d?.counts ?? this.drainReport?.counts ?? ZERO,
        limiting: lim?.name,
        coveredBy: this.covering().map((c) => c.name),
        limitedBy: limitedBy([...this.holders.values()], h.id, this.targets?.lanes ?? []),
        fastForwardedBy: fastForwardedBy(this.targets, h.id),
        blockers: (this.drainReport?.message ?? '').split('\n').slice(1).join('\n'),
        drainFailed: this.drainFailed,
        ...(this.forcedLines.length ? { forced: this.forcedLines.join('\n') } : {}),
        ...(this.budgetWait !== undefined ? { budgetWait: this.budgetWait } : {}),
        ...(d && d.lowestUntargeted !== undefined ? { lowestUntargeted: d.lowestUntargeted } : {}),
      };
      sends.push(this.send(h.id, report));
    }
    await Promise.all(sends);
  }

  /** One signal per changed report (a holder that closed is forgotten by its release). */
  private async send(id: string, report: NodeReport): Promise<void> {
    const { seq: _seq, ...rest } = report;
    const key = JSON.stringify(rest);
    if (this.reportedTo.get(id) === key) return;
    // Counts and blocker lines only: at most every COUNTS_PERIOD_MS (each report is a task for the
    // maintenance, which recomputes its status over all its nodes). Anything its plan reads goes at once.
    const { counts: _c, blockers: _b, ...plan } = rest;
    const planKey = JSON.stringify(plan);
    const last = this.sentAt.get(id);
    if (this.heldBack(last?.planKey, last?.ms ?? -Infinity, planKey)) return;
    this.sentAt.set(id, { planKey, ms: Date.now() });
    this.reportedTo.set(id, key);
    await getExternalWorkflowHandle(id)
      .signal(nodeReportSignal, report)
      .catch(() => undefined);
  }

  // ---- Releasing: nobody holds the node: stop the drain, restore the node, tell the releasers.
  async releasing(): Promise<void> {
    this.stopWatch();
    this.slotWait?.scope.cancel(); // its ask may still land: the release below gives back what it wrote
    this.slotWait = undefined;
    if (this.drainStarted) {
      await getExternalWorkflowHandle(maintenanceDrainWorkflowId(this.node))
        .cancel()
        .catch(() => undefined); // already ended
      this.drainStarted = false;
    }
    this.targets = undefined;
    this.final = false;
    const letGo = this.releasesInEffect();
    const r = await steps.writeMaintenanceNodeState.executeWithOptions({ summary: `release ${this.node}` }, [{ node: this.node, holders: [] }]);
    this.written = undefined;
    this.gone = !r.exists;
    if (this.inLedger) {
      // Restored (uncordoned or left as it was found): no longer disrupted by us. Before the acks, so
      // a completed maintenance has given its slots back.
      await steps.releaseDisruption.executeWithOptions({ summary: `release the budget slot of ${this.node}` }, [{ holder: workflowInfo().workflowId, nodes: [this.node] }]);
      this.inLedger = false;
    }
    this.slot = false;
    this.budgetWait = undefined;
    await this.acknowledgeReleases(letGo);
  }

  /** The releases the next write of the node carries out (taken just before it). */
  releasesInEffect(): string[] {
    return [...this.released];
  }

  /**
   * Tells each maintenance that let go of the node that its release is done, once a write made
   * without it has landed: only those released before that write, and not registered again since.
   */
  async acknowledgeReleases(letGo: string[]): Promise<void> {
    const released = letGo.filter((id) => this.released.has(id));
    for (const id of released) this.released.delete(id);
    const ack: Omit<NodeReport, 'seq'> = { node: this.node, lanes: [], finished: true, drained: false, gone: this.gone, released: true, counts: ZERO, coveredBy: [], limitedBy: [], blockers: '' };
    await Promise.all(released.map((id) => getExternalWorkflowHandle(id).signal(nodeReportSignal, { ...ack, seq: this.seq }).catch(() => undefined)));
  }

  private details(lim: string | undefined): string {
    const holders = [...this.holders.values()].map((h) => `${h.name} (${h.stage})`).join(', ');
    const head = this.budgetWait ?? (this.claimedBy ? `Cycled by CycleNodeRequest ${this.claimedBy}` : this.state());
    const lines = [`**Node ${this.node}: ${head}**`, '', `Held by: ${holders || 'nobody'}`];
    if (this.covering().length) lines.push(`Drain targets: ${lanesText(this.targets?.lanes ?? []) || 'none yet'}${this.final ? ' (final)' : ''}`);
    if (lim) lines.push(`Limited by: ${lim}`);
    if (this.drainReport?.message) lines.push('', '```', this.drainReport.message, '```');
    return lines.join('\n');
  }

  carry(): NodeCoordinatorInput {
    return {
      node: this.node,
      holders: [...this.holders.values()],
      targets: this.targets,
      seq: this.seq,
      drainStarted: this.drainStarted,
      ...(this.requestersSent !== undefined ? { requestersSent: this.requestersSent } : {}),
      drainReport: this.drainReport,
      drainFailed: this.drainFailed,
      recordonedSeen: this.recordonedSeen,
      ...(this.forcedSeen ? { forcedSeen: this.forcedSeen, forcedLines: this.forcedLines } : {}),
      released: [...this.released],
      slot: this.slot,
      inLedger: this.inLedger,
    };
  }
}

const lanesText = (lanes: Lane[]) => lanes.map(entryString).join(', ');

/** The Event's involved object for a holder (its uid is part of its workflow ID). */
function maintenanceRef(h: HolderInfo) {
  const id = parseWorkflowId(h.id);
  return maintenanceEventRef({ name: h.name, uid: id?.kind === 'maintenance' ? id.uid : undefined });
}
