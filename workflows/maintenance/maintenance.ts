// The maintenance workflow (ID nm/<name>/<uid>): one per NodeMaintenance, started by the bridge even
// while Idle. It owns the stage machine and the node membership, advances its plan position i(M)
// once every node has reached and finished the current entry (A3), and aggregates what the node
// coordinators report into the status the bridge mirrors. It never writes a Node itself: the node
// coordinators (node.ts) do, one per node.
//
// Stages, one handler each (the table below, handlers in stages/): Idle → Cordon → Drain → Complete,
// forward only. This file keeps the state, the messages (listen), publish() and carry().
// Issue 26: while it holds nodes it waits only for messages and for the selection watch
// (watchMaintenanceSelection), so its history grows with what changes, not with time.
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
import { effectivePlan, type PlanEntry } from '../../api/drain-plan.js';
import type { Selection } from '../../activities/maintenance/select.js';
import type { NodeMaintenanceSpecInput } from '../../api/node-maintenance.js';
import { MAX_MAINTENANCE_REASON } from '../../api/names.js';
import { maintenanceObjectAttr } from '../ids.js';
import {
  drainStandingSignal,
  maintenanceDeletingSignal,
  maintenancePlanQuery,
  maintenanceRefreshPlanUpdate,
  maintenanceSpecChangedUpdate,
  maintenanceStatusQuery,
  nodeReportSignal,
  previewInputsChangedSignal,
  setStageUpdate,
} from '../messages.js';
import { steps } from '../proxies.js';
import { ObjectAttr, PhaseAttr } from '../search-attributes.js';
import { isDrainedNow, maintenanceStatus, type Facts } from './status.js';
import type { MaintenancePreview, PreviewInputs } from '../../shared/maintenance-preview.js';
import { isStage, NO_COUNTS, stageRank, STAGES, type MaintenanceInput, type MaintenancePlan, type MaintenanceStatus, type NodeReport, type Stage, type StageStatus } from './types.js';
import { idle } from './stages/idle.js';
import { holding } from './stages/hold.js';
import { complete } from './stages/complete.js';
import { RollingRun } from './rollout/effects.js';
import { compactRecord, type RolloutRecord } from './rollout/record.js';
import { listenRollout } from './rollout/updates.js';
import type { TooMany } from './limit.js';

export type Next = Stage | 'End';

/** The table of contents: one handler per stage (stages/), each returning the next. */
const STAGE_HANDLERS: Record<Stage, (m: Maintenance) => Promise<Next>> = {
  Idle: idle, // stages/idle.ts: touch nothing, preview
  Cordon: (m) => holding(m, 'Cordon'), // stages/hold.ts: hold the selected nodes
  Drain: (m) => holding(m, 'Drain'), // and advance through the plan
  Complete: complete, // stages/complete.ts: release every node
};

export async function nodeMaintenanceWorkflow(input: MaintenanceInput): Promise<MaintenanceStatus> {
  const m = new Maintenance(input);
  upsertSearchAttributes([{ key: ObjectAttr, value: maintenanceObjectAttr(input.name) }]);
  let next: Next = m.stage;
  while (next !== 'End') {
    m.enter(next);
    next = await STAGE_HANDLERS[next](m);
  }
  // A setStage that ended it (Complete from Idle) answers its caller before the workflow closes.
  await condition(allHandlersFinished);
  m.publish();
  return m.status();
}

export class Maintenance implements Facts {
  readonly name: string;
  readonly uid: string;
  readonly id: string;
  readonly createdAt: string;
  spec: NodeMaintenanceSpecInput;
  readonly plan: PlanEntry[];
  stage: Stage;
  /** The stage asked for (spec.stage, setStage); acted on after the current step (NM-2.18). */
  desired: Stage;
  index = 0;
  reason?: string;
  allowAllNodes: boolean;
  deleting: boolean;
  observedGeneration?: number;
  completed = false;
  /** Nodes held now, with the latest report from each (undefined until the first). */
  readonly nodes = new Map<string, NodeReport | undefined>();
  /** Nodes that left the selection or the maintenance, waiting for their release report. */
  readonly releasing = new Set<string>();
  /** Nodes selected while Idle (preview only, nothing held). */
  planned: string[] = [];
  /** The Idle preview of what Drain would do (kept after Idle as last seen). */
  preview?: MaintenancePreview;
  /** What the latest preview read (in the status query while Idle: the bridge's feed watches it). */
  previewInputs?: PreviewInputs;
  // The fields below are read and written by the stage handlers (stages/), beside the messages.
  /** The bridge's feed said something the preview read has changed (previewInputsChanged). */
  inputsChanged = false;
  /** Previews finished by this run, one being computed, and whether `plan` asked for a fresh one. */
  previewsDone = 0;
  previewing = false;
  refreshAsked = false;
  private renewing = false;
  selectedTotal = 0;
  readonly stageStatuses: StageStatus[] = [];
  /** Who asked for `desired` by setStage (recorded in the stage's entry when it starts). */
  desiredBy?: string;
  /** A setStage whose write of spec.stage is under way (its echo from the bridge is the same request). */
  private setting?: { stage: string; requestedBy?: string };
  selectsAll?: { total: number; acknowledged: boolean };
  /** #28: the selection is over the limit one maintenance may hold (limit.ts): refused, or nodes left out. */
  tooMany?: TooMany;
  drainedAt?: string;
  /** Without spec.rollout: why the budgets never let it finish (cannot-finish.ts). */
  cannotFinish?: string;
  message = '';
  /** The selection as last read (the watch returns when it differs). */
  selection?: Selection;
  /** The selection watch running (membership is live, NM-2.6: it returns when the selection changes). */
  watching?: CancellationScope;
  /** The current stage's selection check passed (carried, so a renewed run does not check again). */
  admitted = false;
  dirty = false;
  /** Nodes this run has registered with (the first time, their coordinator is started before it is signalled). */
  told = new Set<string>();
  /** A selection not yet acted on (admitSelection's read, or the watch's answer): the next membership pass takes it. */
  freshSelection?: Selection;
  /** With spec.rollout: the rollout's record (carried), and what this run has in flight for it. */
  rollout?: RolloutRecord;
  readonly rolling = new RollingRun();

  constructor(input: MaintenanceInput) {
    this.name = input.name;
    this.uid = input.uid;
    this.id = workflowInfo().workflowId;
    this.createdAt = input.createdAt;
    this.spec = input.spec;
    this.plan = effectivePlan(writtenPlan(input.spec));
    this.stage = input.deleting && (input.spec.stage ?? 'Idle') !== 'Idle' ? 'Complete' : (input.spec.stage ?? 'Idle');
    this.desired = this.stage;
    this.reason = input.spec.reason;
    this.allowAllNodes = input.allowAllNodes ?? false;
    this.deleting = input.deleting ?? false;
    this.observedGeneration = input.generation;
    const c = input.carry;
    if (c) {
      this.stage = c.stage;
      this.desired = c.desired;
      this.index = c.index;
      this.reason = c.reason;
      for (const [n, r] of c.nodes) this.nodes.set(n, r);
      for (const n of c.releasing) this.releasing.add(n);
      this.stageStatuses.push(...c.stageStatuses);
      this.desiredBy = c.desiredBy;
      this.admitted = c.admitted;
      this.selectsAll = c.selectsAll;
      this.drainedAt = c.drainedAt;
      this.rollout = c.rollout;
    }
    this.listen();
  }

  /** The next run's input: a long maintenance keeps a short history. */
  carry(): MaintenanceInput {
    return {
      name: this.name,
      uid: this.uid,
      createdAt: this.createdAt,
      spec: this.spec,
      generation: this.observedGeneration,
      allowAllNodes: this.allowAllNodes,
      deleting: this.deleting,
      carry: {
        stage: this.stage,
        desired: this.desired,
        index: this.index,
        reason: this.reason,
        nodes: [...this.nodes],
        releasing: [...this.releasing],
        stageStatuses: this.stageStatuses,
        desiredBy: this.desiredBy,
        admitted: this.admitted,
        selectsAll: this.selectsAll,
        drainedAt: this.drainedAt,
        ...(this.rollout ? { rollout: compactRecord(this.rollout) } : {}),
      },
    };
  }

  /** Continues as new when the server suggests it, once no update or signal handler is mid-way. */
  async renewIfLong(): Promise<void> {
    if (!workflowInfo().continueAsNewSuggested) return;
    this.renewing = true; // a refreshPlan waiting for a preview answers with the last one
    await condition(allHandlersFinished);
    await continueAsNew<typeof nodeMaintenanceWorkflow>(this.carry());
  }

  get rolloutSpec() {
    return this.spec.rollout;
  }

  /** Messages: the status query, the two stage updates, deletion, and the node reports. */
  private listen(): void {
    setHandler(maintenanceStatusQuery, () => this.status());
    setHandler(maintenancePlanQuery, () => this.planAnswer());
    listenRollout(this); // rolloutNodeDone, setRolloutPaused
    // A preview computed after the ask (one already under way read the cluster before it); only while Idle.
    setHandler(maintenanceRefreshPlanUpdate, () => this.refreshPlan());
    setHandler(
      setStageUpdate,
      ({ stage, reason, requestedBy }) => this.setStage(stage, reason, requestedBy),
      { validator: ({ stage, reason }) => this.checkStage(stage, reason) },
    );
    setHandler(
      maintenanceSpecChangedUpdate,
      ({ spec, generation, allowAllNodes }) => {
        this.observedGeneration = Math.max(generation ?? 0, this.observedGeneration ?? 0) || undefined;
        if (allowAllNodes !== undefined) this.allowAllNodes = allowAllNodes;
        // While Idle the selector and drain options may still change (the CRD freezes them after).
        this.spec = this.stage === 'Idle' ? { ...spec, drainPlan: this.spec.drainPlan } : { ...this.spec, reason: spec.reason };
        const stage = spec.stage ?? 'Idle';
        this.moveTo(stage, spec.reason, this.setting?.stage === stage ? this.setting.requestedBy : undefined);
        return { stage: this.desired, generation };
      },
      { validator: ({ spec }) => this.checkSpecChange(spec) },
    );
    setHandler(previewInputsChangedSignal, () => {
      if (this.stage === 'Idle') this.inputsChanged = true;
    });
    setHandler(maintenanceDeletingSignal, () => {
      this.deleting = true;
      if (this.desired !== 'Idle') this.desired = 'Complete';
      this.dirty = true;
    });
    setHandler(nodeReportSignal, (r) => {
      if (r.released) {
        this.releasing.delete(r.node);
        // Keep what the node reached (status shows the final targets after Complete).
        const prev = this.nodes.get(r.node);
        if (this.nodes.has(r.node) && this.stage === 'Complete') this.nodes.set(r.node, prev ? { ...prev, released: true, gone: r.gone || prev.gone } : r);
      } else if (this.nodes.has(r.node)) {
        const prev = this.nodes.get(r.node);
        if (prev && prev.seq > r.seq) return; // stale
        // What the drain said straight is its own latest (issue 26 §5); a gone or claimed node has no drain.
        const direct = prev?.direct && !r.gone && !r.claimedBy ? { lanes: prev.lanes, finished: prev.finished, lowestUntargeted: prev.lowestUntargeted, direct: prev.direct } : {};
        this.nodes.set(r.node, { ...r, ...direct });
      }
      this.dirty = true;
    });
    // Issue 26 §5: the node's drain, straight: where it stands (the coordinator relays the same a step later).
    setHandler(drainStandingSignal, (d) => {
      if (!this.nodes.has(d.node)) return;
      // Before the coordinator's first report: the drain sends only to the holders covering the node.
      const prev = this.nodes.get(d.node) ?? { node: d.node, seq: d.seq, lanes: [], finished: false, drained: false, gone: false, released: false, counts: NO_COUNTS, coveredBy: [this.name], limitedBy: [], blockers: '' };
      if (prev.gone || prev.claimedBy || prev.released) return;
      const last = prev.direct;
      // One drain's reports in their order; a new drain (restarted by the coordinator) starts at a newer seq.
      if (last && (d.run === last.run ? d.n <= last.n : d.seq < last.seq)) return;
      this.nodes.set(d.node, { ...prev, lanes: d.lanes, finished: d.finished, lowestUntargeted: d.lowestUntargeted, direct: { run: d.run, n: d.n, seq: d.seq } });
      this.dirty = true;
    });
  }

  /** refreshPlan: a preview computed after the ask (one already under way read the cluster before it); only while Idle. */
  private async refreshPlan(): Promise<MaintenancePlan> {
    if (this.stage === 'Idle' && !this.deleting) {
      const want = this.previewsDone + (this.previewing ? 2 : 1);
      this.refreshAsked = true;
      await condition(() => this.previewsDone >= want || this.stage !== 'Idle' || this.deleting || this.renewing);
    }
    return this.planAnswer();
  }

  /**
   * setStage: writes spec.stage (and spec.reason) to the object, then acts. The bridge sees this
   * write and sends it back as specChanged, maybe before the write's answer is here: that echo is
   * this request (its attribution and reason, which the write puts in spec.reason so the echo
   * cannot undo it).
   */
  private async setStage(stage: string, reason: string | undefined, requestedBy: string | undefined): Promise<{ stage: Stage; generation?: number }> {
    this.setting = { stage, requestedBy };
    try {
      const w = await steps.writeMaintenanceStage.executeWithOptions({ summary: `spec.stage = ${stage}` }, [{ name: this.name, uid: this.uid, stage, reason }]);
      if (!w.exists) throw ApplicationFailure.nonRetryable(`NodeMaintenance ${this.name} no longer exists`, 'NotFound');
      this.moveTo(stage as Stage, reason, requestedBy);
      this.observedGeneration = Math.max(w.generation ?? 0, this.observedGeneration ?? 0) || undefined;
      return { stage: this.desired, generation: w.generation };
    } finally {
      if (this.setting?.stage === stage) this.setting = undefined;
    }
  }

  // ---- Validators (NM-2.15, NM-2.16): a refused change leaves no trace in history.
  private checkStage(stage: string, reason?: string): void {
    if (!isStage(stage)) throw new Error(`unknown stage ${stage}; one of ${STAGES.join(', ')}`);
    if (reason !== undefined && reason.length > MAX_MAINTENANCE_REASON) throw new Error(`reason is longer than ${MAX_MAINTENANCE_REASON} characters (spec.reason)`);
    if (this.deleting) throw new Error('being deleted: Complete is already in effect');
    if (this.completed || this.stage === 'Complete') throw new Error('maintenance is complete');
    if (stageRank(stage) < stageRank(this.desired)) throw new Error(`cannot go back from ${this.desired} to ${stage}`);
  }

  private checkSpecChange(spec: NodeMaintenanceSpecInput): void {
    const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
    if (!same(spec.drainPlan, this.spec.drainPlan)) throw new Error('spec.drainPlan is immutable');
    if (this.stage !== 'Idle' && !same(spec.nodeSelector, this.spec.nodeSelector)) throw new Error('spec.nodeSelector cannot change once the maintenance has left Idle');
    if (this.stage !== 'Idle' && !same(spec.drain, this.spec.drain)) throw new Error('spec.drain cannot change once the maintenance has left Idle');
    const stage = spec.stage ?? 'Idle';
    if (!isStage(stage)) throw new Error(`unknown stage ${stage}; one of ${STAGES.join(', ')}`);
    if (stageRank(stage) < stageRank(this.desired)) throw new Error(`spec.stage cannot go back from ${this.desired} to ${stage}`);
  }

  private moveTo(stage: Stage, reason?: string, requestedBy?: string): void {
    if (stageRank(stage) > stageRank(this.desired)) {
      this.desired = stage;
      this.desiredBy = requestedBy;
    }
    if (reason !== undefined) this.reason = reason;
    this.dirty = true;
  }

  enter(stage: Stage): void {
    if (this.stageStatuses.at(-1)?.name !== stage) {
      const by = stage === this.desired ? this.desiredBy : undefined;
      this.stageStatuses.push({ name: stage, startTimestamp: new Date().toISOString(), ...(by && { requestedBy: by }) });
      this.admitted = false; // NM-4.8: each stage entry checks the selection again
    }
    this.stage = stage;
    upsertSearchAttributes([{ key: PhaseAttr, value: stage }]);
    this.publish();
  }

  planAnswer(): MaintenancePlan {
    return { name: this.name, stage: this.stage, plan: this.plan, preview: this.preview };
  }

  // ---- Reporting.

  status(): MaintenanceStatus {
    return maintenanceStatus(this);
  }

  publish(): void {
    if (this.drainedAt === undefined && isDrainedNow(this)) this.drainedAt = new Date().toISOString();
    const s = this.status();
    this.message = s.message;
    setCurrentDetails(detailsMarkdown(this.name, s));
  }
}

function detailsMarkdown(name: string, s: MaintenanceStatus): string {
  const lines = [`**NodeMaintenance ${name}: ${s.stage}**`, '', s.message];
  const limited = [...new Set(s.nodeStatuses.flatMap((n) => n.limitedBy))];
  if (limited.length) lines.push('', `Limited by: ${limited.join(', ')}`);
  for (const n of s.nodeStatuses.filter((x) => x.drainMessage.includes('\n')).slice(0, 10)) lines.push('', `Node ${n.nodeRef.name}:`, '```', n.drainMessage, '```');
  return lines.join('\n');
}

/** spec.drainPlan as the apiserver admitted it (defaults applied; podPriority required by the CRD and the bridge's check). */
function writtenPlan(spec: NodeMaintenanceSpecInput): PlanEntry[] | undefined {
  return spec.drainPlan?.map((e, i) => {
    if (e.podPriority === undefined) throw ApplicationFailure.nonRetryable(`spec.drainPlan[${i}].podPriority: podPriority is required`, 'InvalidSpec');
    return { podType: e.podType ?? 'Default', podPriority: e.podPriority, ...(e.podSelector ? { podSelector: e.podSelector } : {}) };
  });
}
