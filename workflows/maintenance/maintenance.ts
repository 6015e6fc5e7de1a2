// The maintenance workflow (ID nm/<name>/<uid>): one per NodeMaintenance, started by the bridge even
// while Idle. It owns the stage machine and the node membership, advances its plan position i(M)
// once every node has reached and finished the current entry (A3), and aggregates what the node
// coordinators report into the status the bridge mirrors. It never writes a Node itself: the node
// coordinators (node.ts) do, one per node.
//
// Stages, one handler each (the table below): Idle → Cordon → Drain → Complete, forward only.
// Issue 26: while it holds nodes it waits only for messages and for the selection watch
// (watchMaintenanceSelection), so its history grows with what changes, not with time.
import {
  ApplicationFailure,
  CancellationScope,
  WorkflowIdReusePolicy,
  ParentClosePolicy,
  allHandlersFinished,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  setCurrentDetails,
  setHandler,
  startChild,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { effectivePlan, type PlanEntry } from '../../api/drain-plan.js';
import type { Selection } from '../../activities/maintenance/select.js';
import { MAX_MAINTENANCE_REASON, type NodeMaintenanceSpecInput, type NodeSelector } from '../../api/node-maintenance.js';
import { maintenanceEventRef, maintenanceNodeWorkflowId, maintenanceObjectAttr } from '../ids.js';
import {
  maintenanceDeletingSignal,
  maintenancePlanQuery,
  maintenanceRefreshPlanUpdate,
  maintenanceSpecChangedUpdate,
  maintenanceStatusQuery,
  nodeReportSignal,
  previewInputsChangedSignal,
  registerHolderSignal,
  releaseHolderSignal,
  setStageUpdate,
} from '../messages.js';
import { longSteps, steps, watchSteps } from '../proxies.js';
import { NodesAttr, ObjectAttr, PhaseAttr } from '../search-attributes.js';
import { maintenanceNodeWorkflow } from './node.js';
import { advance, idleRefreshMs } from './progress.js';
import { isDrainedNow, maintenanceStatus, progressNodes, type Facts } from './status.js';
import type { MaintenancePreview, PreviewInputs } from '../../shared/maintenance-preview.js';
import { isStage, stageRank, STAGES, type HolderInfo, type MaintenanceInput, type MaintenancePlan, type MaintenanceStatus, type NodeReport, type Stage, type StageStatus } from './types.js';

/** Complete sends its releases again this often while a coordinator has not acknowledged one. */
const RELEASE_RETRY_MS = 10_000;
/** The selection watch returns at the latest after 20 minutes (RENEW_MS). */
const waits = watchSteps('30 minutes');
/** The preview reads every selected node's pods: heartbeating, so a long selection is not cut at 30 s. */
const previewSteps = longSteps('10 minutes');

type Next = Stage | 'End';

/** The table of contents: one handler per stage, each returning the next. */
const STAGE_HANDLERS: Record<Stage, (m: Maintenance) => Promise<Next>> = {
  Idle: (m) => m.idle(),
  Cordon: (m) => m.holding('Cordon'),
  Drain: (m) => m.holding('Drain'),
  Complete: (m) => m.complete(),
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
  /** The bridge's feed said something the preview read has changed (previewInputsChanged). */
  private inputsChanged = false;
  /** Previews finished by this run, one being computed, and whether `plan` asked for a fresh one. */
  private previewsDone = 0;
  private previewing = false;
  private refreshAsked = false;
  private renewing = false;
  selectedTotal = 0;
  readonly stageStatuses: StageStatus[] = [];
  /** Who asked for `desired` by setStage (recorded in the stage's entry when it starts). */
  desiredBy?: string;
  /** A setStage whose write of spec.stage is under way (its echo from the bridge is the same request). */
  private setting?: { stage: string; requestedBy?: string };
  selectsAll?: { total: number; acknowledged: boolean };
  drainedAt?: string;
  message = '';
  /** The selection as last read (the watch returns when it differs). */
  private selection?: Selection;
  /** The selection watch running (membership is live, NM-2.6: it returns when the selection changes). */
  private watching?: CancellationScope;
  /** The current stage's selection check passed (carried, so a renewed run does not check again). */
  private admitted = false;
  private dirty = false;
  /** Nodes this run has registered with (the first time, their coordinator is started before it is signalled). */
  private told = new Set<string>();
  /** A selection not yet acted on (admitSelection's read, or the watch's answer): the next membership pass takes it. */
  private freshSelection?: Selection;

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
      },
    };
  }

  /** Continues as new when the server suggests it, once no update or signal handler is mid-way. */
  private async renewIfLong(): Promise<void> {
    if (!workflowInfo().continueAsNewSuggested) return;
    this.renewing = true; // a refreshPlan waiting for a preview answers with the last one
    await condition(allHandlersFinished);
    await continueAsNew<typeof nodeMaintenanceWorkflow>(this.carry());
  }

  /** Messages: the status query, the two stage updates, deletion, and the node reports. */
  private listen(): void {
    setHandler(maintenanceStatusQuery, () => this.status());
    setHandler(maintenancePlanQuery, () => this.planAnswer());
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
        this.nodes.set(r.node, r);
      }
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

  // ---- Idle: touch nothing (NM-2.2); the status previews which nodes would be taken.
  async idle(): Promise<Next> {
    let unchanged = 0; // refreshes in a row that found the same preview (it names the selected nodes) with no edit between
    for (;;) {
      const edited = this.dirty;
      const sel = await this.select();
      this.planned = sel.nodes;
      const changed = await this.refreshPreview();
      unchanged = changed || edited ? 0 : unchanged + 1;
      this.publish();
      this.dirty = false;
      // Until the bridge's feed says what the preview read has changed, a spec edit, a stage,
      // deletion, or `plan` asks: no activity meanwhile. idleRefreshMs is only the safety net (the
      // bridge may be down, or may have missed a change while it was).
      await condition(() => this.inputsChanged || this.woken(), idleRefreshMs(unchanged));
      if (this.deleting && this.desired === 'Idle') return 'End'; // NM-2.11: no finalizer, nothing held
      if (this.desired !== 'Idle') return this.desired;
      if (!this.refreshAsked) await this.renewIfLong(); // the refreshPlan handler waits for the next preview
    }
  }

  private planAnswer(): MaintenancePlan {
    return { name: this.name, stage: this.stage, plan: this.plan, preview: this.preview };
  }

  private woken(): boolean {
    return this.desired !== 'Idle' || this.deleting || this.dirty || this.refreshAsked;
  }

  /**
   * Read-only (NM-2.2). An unchanged preview comes back as its digest alone (with its new time), so
   * refreshes keep history small. Whether it changed.
   */
  private async refreshPreview(): Promise<boolean> {
    this.refreshAsked = false;
    this.inputsChanged = false; // a signal during the preview may postdate its reads: it stays set
    this.previewing = true;
    const r = await previewSteps.previewMaintenance.executeWithOptions({ summary: 'preview the drain' }, [
      { nodes: this.planned, plan: this.plan, options: this.spec.drain, previous: this.preview?.digest },
    ]);
    this.previewing = false;
    this.previewsDone++;
    this.previewInputs = r.inputs && { ...r.inputs, nodes: this.planned };
    if ('unchanged' in r) {
      if (this.preview) this.preview = { ...this.preview, computedAt: r.computedAt };
      return false;
    }
    const { inputs: _i, ...preview } = r;
    this.preview = preview;
    return true;
  }

  // ---- Cordon and Drain: hold the selected nodes; in Drain, advance through the plan.
  async holding(stage: 'Cordon' | 'Drain'): Promise<Next> {
    if (!this.admitted && !(await this.admitSelection())) return this.desired === stage ? 'Complete' : this.desired;
    this.admitted = true;
    // NM-2.3: the finalizer is on the object before the first Node write.
    if (!(await steps.ensureMaintenanceFinalizer.executeWithOptions({ summary: 'add finalizer' }, [{ name: this.name, uid: this.uid }]))) {
      this.deleting = true;
      return 'Complete';
    }
    await this.tellAll([...this.nodes.keys()]); // the stage changed for nodes already held
    for (;;) {
      await this.syncMembership();
      if (stage === 'Drain') await this.advance();
      this.publish();
      if (this.desired !== stage) return this.desired;
      this.dirty = false;
      this.watchSelection();
      await condition(() => this.dirty);
      await this.renewIfLong();
    }
  }

  /**
   * NM-2.6 without a poll: one long activity that returns the selection once it differs from the
   * last read (a node labelled in or out, joining or deleted), or at its renewal; its answer wakes the loop.
   */
  private watchSelection(): void {
    if (this.watching || !this.selection) return;
    const scope = new CancellationScope();
    this.watching = scope;
    const { nodes, totalNodes } = this.selection;
    const input = { nodeSelector: this.spec.nodeSelector as NodeSelector, nodes, totalNodes };
    scope
      .run(() => waits.watchMaintenanceSelection.executeWithOptions({ summary: 'watch the selection' }, [input]))
      .then(
        (r) => {
          if (this.watching !== scope) return;
          this.watching = undefined;
          if (r.changed) {
            this.freshSelection = r.selection;
            this.dirty = true;
          } else this.watchSelection(); // renewal: nothing changed
        },
        () => {
          if (this.watching === scope) this.watching = undefined;
        },
      );
  }

  private stopWatching(): void {
    this.watching?.cancel();
    this.watching = undefined;
  }

  /** NM-4.8: a selector that takes every node waits for the allow-all annotation (or Complete). */
  private async admitSelection(): Promise<boolean> {
    for (;;) {
      const sel = this.freshSelection ?? (await this.select());
      this.freshSelection = sel;
      this.selection = sel;
      const all = sel.nodes.length > 0 && sel.nodes.length === sel.totalNodes;
      this.selectsAll = all ? { total: sel.totalNodes, acknowledged: this.allowAllNodes } : undefined;
      await this.warnAboutSelection(sel);
      if (!all || this.allowAllNodes) return true;
      this.publish();
      this.dirty = false;
      this.watchSelection(); // a node joining or leaving changes "every node"; the annotation comes as a message
      await condition(() => this.dirty);
      if (this.desired === 'Complete' || this.deleting) {
        this.stopWatching();
        return false;
      }
    }
  }

  /** NM-4.10 and NM-4.8: a selection of no node, or of every control-plane node, is worth a warning (not a stop). */
  private async warnAboutSelection(sel: Selection): Promise<void> {
    const warn = async (reason: string, message: string) =>
      steps.recordEvent.executeWithOptions({ summary: `event ${reason}` }, [
        { involved: maintenanceEventRef(this), type: 'Warning', reason, message, dedupKey: `${this.id}/${reason}/${this.stage}` },
      ]);
    if (!sel.nodes.length) await warn('NoNodesSelected', `stage ${this.stage}: the nodeSelector matches no node`);
    if (sel.controlPlaneNodes > 0 && sel.controlPlaneSelected === sel.controlPlaneNodes) {
      await warn('SelectsAllControlPlaneNodes', `stage ${this.stage}: selects all ${sel.controlPlaneNodes} control-plane nodes`);
    }
  }

  // ---- Complete: every node released (uncordoned unless held by another or cordoned before), then the end.
  async complete(): Promise<Next> {
    this.stopWatching();
    for (const n of this.nodes.keys()) this.releasing.add(n);
    while (this.releasing.size) {
      for (const n of this.releasing) await this.release(n);
      this.publish();
      await condition(() => this.releasing.size === 0, RELEASE_RETRY_MS);
    }
    this.completed = true;
    return 'End';
  }

  // ---- Steps.

  private async select(): Promise<Selection> {
    const sel = await steps.selectMaintenanceNodes.executeWithOptions({ summary: 'select nodes' }, [{ nodeSelector: this.spec.nodeSelector as NodeSelector }]);
    this.selectedTotal = sel.nodes.length;
    upsertSearchAttributes([{ key: NodesAttr, value: sel.nodes.slice(0, 100) }]);
    return sel;
  }

  /** Takes nodes that match now, releases those that stopped matching (a deleted node stays, reported gone). */
  private async syncMembership(): Promise<void> {
    // Reports wake the loop often; the selection is read once per run, then the watch brings changes.
    const fresh = this.freshSelection;
    this.freshSelection = undefined;
    if (!fresh && this.selection) return;
    const sel = fresh ?? (await this.select());
    this.selection = sel;
    if (fresh) upsertSearchAttributes([{ key: NodesAttr, value: sel.nodes.slice(0, 100) }]);
    const now = new Set(sel.nodes);
    const joining = sel.nodes.filter((n) => !this.nodes.has(n));
    for (const n of joining) this.nodes.set(n, undefined);
    await this.tellAll(joining);
    for (const [n, r] of this.nodes) {
      // A node a cycle claimed stays until its coordinator has seen the claim go or the node go (NM-7.7:
      // deleted by the cycle, it counts as finished); the cycle's detach may also drop it from the selection.
      if (now.has(n) || r?.gone || r?.claimedBy) continue;
      this.nodes.delete(n);
      this.releasing.add(n);
      await this.release(n);
    }
  }

  /** A3: move on while every node has reached and finished the current entry; tell the nodes. */
  private async advance(): Promise<void> {
    const next = advance(this.plan, this.index, progressNodes(this));
    if (next === this.index) return;
    this.index = next;
    await this.tellAll([...this.nodes.keys()]);
  }

  private holder(): HolderInfo {
    return { id: this.id, name: this.name, createdAt: this.createdAt, stage: this.stage === 'Drain' ? 'Drain' : 'Cordon', plan: this.plan, index: this.index, reason: this.reason, drain: this.spec.drain };
  }

  /** Tells many nodes at once: the signals go out together instead of one round trip each. */
  private async tellAll(nodes: string[]): Promise<void> {
    await Promise.all(nodes.map((n) => this.tell(n)));
  }

  /**
   * Registers (or updates) this maintenance with the node's coordinator, starting it if none runs.
   * Start-or-signal in a loop: a coordinator that ends between the two is started again.
   */
  private async tell(node: string): Promise<void> {
    const id = maintenanceNodeWorkflowId(node);
    const holder = this.holder();
    // A node this run has not told yet most often has no coordinator: try the start first then.
    let startFirst = !this.told.has(node);
    this.told.add(node);
    for (;;) {
      const signalled =
        !startFirst &&
        (await getExternalWorkflowHandle(id)
          .signal(registerHolderSignal, holder)
          .then(() => true, () => false));
      startFirst = false;
      if (signalled) return;
      try {
        await startChild(maintenanceNodeWorkflow, {
          workflowId: id,
          args: [{ node, holders: [holder] }],
          parentClosePolicy: ParentClosePolicy.ABANDON, // it serves every maintenance of the node, not only this one
          workflowIdReusePolicy: WorkflowIdReusePolicy.ALLOW_DUPLICATE,
          staticSummary: `coordinator of node ${node}`,
        });
        return;
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
    }
  }

  private async release(node: string): Promise<void> {
    const ok = await getExternalWorkflowHandle(maintenanceNodeWorkflowId(node))
      .signal(releaseHolderSignal, { id: this.id })
      .then(() => true, () => false);
    if (!ok) this.releasing.delete(node); // no coordinator: nothing is held there
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
