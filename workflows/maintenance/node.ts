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
// This file keeps the state, the messages, carry() and the loop; each step is a function of that
// state in coordinator/ (budget, hold, retarget, report, release).
//
// Issue 26: idle costs nothing. Besides messages, the loop wakes only for the bridge's nodeChanged
// (the node uncordoned, a claim, the node gone), what the budget wait above returns, and a look's
// backstop timer every half hour: a held node's history grows with what changes, not with time, and
// no activity runs for it while nothing changes (no heartbeats for the server to write).
import {
  CancellationScope,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { maintenanceDrainWorkflowId } from '../ids.js';
import {
  drainProgressSignal,
  nodeChangedSignal,
  nodeMaintenanceStateQuery,
  registerHolderSignal,
  releaseHolderSignal,
  retryNowSignal,
  type DrainReport,
} from '../messages.js';
import { NodesAttr } from '../search-attributes.js';
import type { NodeTargetsState } from './targets.js';
import type { HolderInfo } from './types.js';
import type { AcquireResult } from '../../activities/budget/index.js';
import { slotTaken } from './coordinator/budget.js';
import { armLook, holding, takeLook } from './coordinator/hold.js';
import { advancing } from './coordinator/retarget.js';
import { reporting } from './coordinator/report.js';
import { acknowledgeReleases, releasesInEffect, releasing } from './coordinator/release.js';

/** Count-only changes reach a holder at most this often (its status, not its plan, depends on them). */
const COUNTS_PERIOD_MS = 2_000;

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
  /**
   * What the last run decided and found, so a renewed run decides the same (RM-7.1): the targets are
   * final (else it sends the same lanes again at a new seq, and the drain, drained, starts over), the
   * node gone or claimed (else it reports neither until its first write), what each holder last heard.
   */
  final?: boolean;
  gone?: boolean;
  claimedBy?: string;
  reportedTo?: Array<[string, string]>;
}

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
      await releasing(c);
      if (!c.holders.size) return; // a register that raced the release makes this run go on
      continue;
    }
    const slot = await slotTaken(c);
    if (!slot) {
      // Not cordoned, nothing written: a release is done at once, and the holders hear why.
      await acknowledgeReleases(c, releasesInEffect(c));
      await reporting(c);
      if (workflowInfo().continueAsNewSuggested) await continueAsNew<typeof maintenanceNodeWorkflow>(c.carry());
      continue;
    }
    const letGo = releasesInEffect(c); // before the write: a release that lands during it is not on the node yet
    if (c.drainStarted) {
      // A drain ran, so the node is cordoned already. A running drain and the holders need the new
      // targets now: the node write goes beside them, after the targets are decided, so it shows
      // them: one write per change, not two.
      const look = takeLook(c);
      await Promise.all([advancing(c), holding(c, look)]);
      await acknowledgeReleases(c, letGo); // the node no longer names them
    } else {
      takeLook(c);
      if (slot !== 'held') await holding(c, true); // cordoned before any drain starts (the slot's write did it)
      await acknowledgeReleases(c, letGo);
      await advancing(c);
    }
    armLook(c);
    if (workflowInfo().continueAsNewSuggested) await continueAsNew<typeof maintenanceNodeWorkflow>(c.carry());
  }
}

/** The node's state; the steps (coordinator/) read and write it. */
export class Coordinator {
  readonly node: string;
  readonly holders: Map<string, HolderInfo>;
  dirty = true;
  targets?: NodeTargetsState;
  final = false;
  seq: number;
  drainStarted: boolean;
  /** The requesters last sent to the drain (JSON), to send them again when they change (NM-5.6). */
  requestersSent?: string;
  drainReport?: DrainReport;
  gone = false;
  /** Why the last drain failed (it ended; the node stays cordoned). */
  drainFailed?: string;
  /** The CycleNodeRequest that claimed the node (NM-7.7): no cordon, no drain; looked at again every pass. */
  claimedBy?: string;
  /** Holders whose release is done but not yet acknowledged to them. */
  released: Set<string>;
  lastRevertEventMs = -Infinity;
  /** The drain's re-cordon count already turned into an UncordonReverted Event. */
  recordonedSeen = 0;
  /** How many of the current drain's forced actions are recorded on the holders (Events), and their lines for status. */
  forcedSeen: number;
  forcedLines: string[];
  phase: string | undefined;
  reportedTo = new Map<string, string>();
  /** When the node was last written (count-only changes are held back for COUNTS_PERIOD_MS after it). */
  lookedAtMs = -Infinity;
  /** nodeChanged or the backstop: the next write is made even if nothing changed (it re-cordons, NM-2.5). */
  lookDue = false;
  /** The look's backstop timer (coordinator/hold.ts armLook). */
  backstop?: CancellationScope;
  /** The budget wait (the refusal it was asked with). */
  slotWait?: { previous?: string; scope: CancellationScope; answer?: AcquireResult };
  /** Set by send() when a count-only report was held back: the pass that sends it. */
  countsDueMs?: number;
  sentAt = new Map<string, { planKey: string; ms: number }>();
  /** The last node write without its counts. */
  writtenMain?: string;
  /** The last node state written (this run): an unchanged one is not written again until the periodic look. */
  written?: string;
  /** A slot is held: the node may be cordoned (kept until the restoring write). */
  slot: boolean;
  /** The ledger may name this coordinator for the node (disrupted or waiting): released with the node. */
  inLedger: boolean;
  /** The refusal while no slot is held. */
  budgetWait?: string;

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
    this.final = input.final ?? false;
    this.gone = input.gone ?? false;
    this.claimedBy = input.claimedBy;
    // Only for holders that still hold it: a released one hears nothing more.
    this.reportedTo = new Map((input.reportedTo ?? []).filter(([id]) => this.holders.has(id)));
    this.listen();
  }

  /** Messages: holders register and release, the drain reports, retryNow, the state query. */
  private listen(): void {
    setHandler(registerHolderSignal, (h) => {
      this.holders.set(h.id, h);
      this.released.delete(h.id);
      this.dirty = true;
    });
    setHandler(releaseHolderSignal, ({ id }) => {
      this.holders.delete(id);
      this.released.add(id);
      this.reportedTo.delete(id); // its ack is what it hears last: registered again, it hears the node again
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
    // The bridge saw the node change in a way a holder cares about (or its Node watch began): look.
    setHandler(nodeChangedSignal, () => {
      this.lookDue = true;
      this.dirty = true;
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

  covering(): HolderInfo[] {
    return [...this.holders.values()].filter((h) => h.stage === 'Drain');
  }

  state(): 'Cordoned' | 'Draining' | 'Drained' {
    if (!this.covering().length) return 'Cordoned';
    return this.drainReport?.drained && this.drainReport.targetsSeq === this.seq ? 'Drained' : 'Draining';
  }

  /**
   * A change of counts only (the rest, `key`, as last sent at `lastMs`) waits until COUNTS_PERIOD_MS
   * after that send; the pass that sends it is scheduled then.
   */
  heldBack(lastKey: string | undefined, lastMs: number, key: string): boolean {
    if (key !== lastKey || Date.now() - lastMs >= COUNTS_PERIOD_MS) return false;
    this.countsDueMs = Math.min(this.countsDueMs ?? Infinity, lastMs + COUNTS_PERIOD_MS);
    return true;
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
      final: this.final,
      gone: this.gone,
      ...(this.claimedBy ? { claimedBy: this.claimedBy } : {}),
      reportedTo: [...this.reportedTo].filter(([id]) => this.holders.has(id)),
    };
  }
}
