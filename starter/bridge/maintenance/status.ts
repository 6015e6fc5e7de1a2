// Pure mapping from a maintenance workflow's `maintenanceStatus` answer to the status of its
// NodeMaintenance (spec §1): the same bookkeeping as a CycleNodeRequest (workflowId, runId,
// observedGeneration, metav1 conditions with lastTransitionTime kept while unchanged), the Events a
// change calls for (StageStarted, Drained, SelectsAllNodes; a rollout's in rollout-status.ts), and
// the invalid-spec report (NM-4.7).
import type { NodeMaintenanceStatus } from '../../../api/node-maintenance.js';
import { isStage, type MaintenanceStatus } from '../../../workflows/maintenance/types.js';
import { objectNodeStatus, objectRolloutStatus, rolloutEvents } from './rollout-status.js';
import { drainBlockedEvents, dropUndefined, sameWorkflow, setCondition, type ClosedWorkflow, type StatusEvent, type WorkflowStatusInput } from '../workflow-status.js';

/** Whether a query answer (or a workflow result) has the shape of a MaintenanceStatus. */
export function isMaintenanceStatus(v: unknown): v is MaintenanceStatus {
  if (typeof v !== 'object' || v === null) return false;
  const s = v as Partial<MaintenanceStatus>;
  return isStage(s.stage) && Array.isArray(s.stageStatuses) && Array.isArray(s.nodeStatuses) && Array.isArray(s.conditions) && typeof s.completed === 'boolean';
}

const oneLine = (s: string) => s.split('\n')[0]!.trim();

export interface MaintenanceStatusInput extends WorkflowStatusInput<NodeMaintenanceStatus, MaintenanceStatus> {
  /** Set when the workflow has closed without completing: Ready says so. */
  closedWithout?: string;
}

/**
 * The status to write for a maintenance with a workflow. Without an answer yet, what the status
 * holds for the same workflow is kept (a note that it started at first).
 */
export function maintenanceObjectStatus(i: MaintenanceStatusInput): NodeMaintenanceStatus {
  const { prev, same, fields } = sameWorkflow(i);
  const gen = i.observedGeneration;
  let out: NodeMaintenanceStatus;
  if (i.state) {
    const s = i.state;
    let conditions = same ? prev.conditions : undefined;
    for (const c of s.conditions) conditions = setCondition(conditions, { ...c, observedGeneration: gen }, i.now);
    out = {
      selectedNodes: s.selectedNodes,
      message: oneLine(s.message),
      drainPlan: s.drainPlan,
      stageStatuses: s.stageStatuses,
      drainStatus: s.drainStatus,
      nodeStatuses: s.nodeStatuses.map(objectNodeStatus),
      nodeStatusesOmitted: s.nodeStatusesOmitted,
      rollout: objectRolloutStatus(s.rollout),
      conditions,
    };
  } else if (same) {
    const { workflowId: _w, runId: _r, observedGeneration: _g, ...kept } = prev;
    out = kept;
  } else {
    out = { message: `workflow ${i.workflow.workflowId} started` };
  }
  if (i.closedWithout) {
    out.message = i.closedWithout;
    out.conditions = setCondition(out.conditions, { type: 'Ready', status: 'False', reason: 'WorkflowClosed', message: i.closedWithout, observedGeneration: gen }, i.now);
  }
  return dropUndefined({
    ...out,
    ...fields,
  });
}

/**
 * A closed workflow's last word: its MaintenanceStatus result, else its final query answer, else
 * the last answer seen; `closedWithout` says why when it closed without completing Complete.
 */
export function closedMaintenance(closed: ClosedWorkflow<MaintenanceStatus>, lastSeen: MaintenanceStatus | undefined, workflowId: string): { state?: MaintenanceStatus; closedWithout?: string } {
  const state = closed.statusName === 'COMPLETED' && isMaintenanceStatus(closed.result) ? closed.result : (closed.finalState ?? lastSeen);
  if (closed.statusName === 'COMPLETED') return { state };
  const what = closed.statusName.toLowerCase().replace(/_/g, ' ');
  return { state, closedWithout: `workflow ${workflowId} ${what}${closed.failure ? `: ${oneLine(closed.failure)}` : ''}` };
}

/** Whether the workflow is done with the object: it finished Complete (the finalizer may go, NM-2.12). */
export function maintenanceCompleted(state: MaintenanceStatus | undefined, closed: ClosedWorkflow<MaintenanceStatus> | undefined): boolean {
  if (state?.completed) return true;
  if (!closed) return false;
  const last = closed.statusName === 'COMPLETED' && isMaintenanceStatus(closed.result) ? closed.result : closed.finalState;
  return closed.statusName === 'COMPLETED' && (last === undefined || last.completed);
}

/** Nodes with their drain messages while the maintenance is in Drain (Idle's preview and Cordon block nothing). */
const drainingNodes = (s: NodeMaintenanceStatus | undefined) =>
  s?.stageStatuses?.at(-1)?.name === 'Drain' ? (s.nodeStatuses ?? []).map((n) => ({ name: n.nodeRef.name, message: n.drainMessage })) : [];

const conditionOf = (s: NodeMaintenanceStatus | undefined, type: string) => s?.conditions?.find((c) => c.type === type);

/**
 * The Events a status change calls for, each once per occurrence (the dedup key names it):
 * `StageStarted` per stage newly started (naming spec.reason), `Drained` when Drained turns True,
 * a Warning `SelectsAllNodes` when the selection of every node starts blocking a stage, a
 * Warning `DrainBlocked` per node whose drain has just become blocked (as for a CycleNodeRequest),
 * and a rolling maintenance's (rollout-status.ts: RolloutStopped, CannotFinish, NodeFailed, NodeDone).
 */
export function maintenanceEvents(prev: NodeMaintenanceStatus | undefined, next: NodeMaintenanceStatus, reason: string | undefined): StatusEvent[] {
  const wf = next.workflowId ?? '';
  const before = prev?.workflowId === next.workflowId ? prev : undefined;
  const out: StatusEvent[] = [];
  const started = new Set((before?.stageStatuses ?? []).map((s) => s.name));
  for (const s of next.stageStatuses ?? []) {
    if (started.has(s.name)) continue;
    out.push({ type: 'Normal', reason: 'StageStarted', message: `stage ${s.name} started${reason ? `: ${reason}` : ''}${s.requestedBy ? ` (setStage by ${s.requestedBy})` : ''}`, dedup: `${wf}/StageStarted/${s.name}` });
  }
  const drained = conditionOf(next, 'Drained');
  if (drained?.status === 'True' && conditionOf(before, 'Drained')?.status !== 'True') {
    out.push({ type: 'Normal', reason: 'Drained', message: drained.message || 'every selected node is drained', dedup: `${wf}/Drained` });
  }
  out.push(...drainBlockedEvents(wf, drainingNodes(before), drainingNodes(next)));
  const all = conditionOf(next, 'SelectsAllNodes');
  const wasAll = conditionOf(before, 'SelectsAllNodes');
  if (all?.status === 'True' && all.reason !== 'Acknowledged' && !(wasAll?.status === 'True' && wasAll.reason === all.reason)) {
    const stage = next.stageStatuses?.at(-1)?.name ?? '';
    out.push({ type: 'Warning', reason: 'SelectsAllNodes', message: all.message, dedup: `${wf}/SelectsAllNodes/${stage}` });
  }
  out.push(...rolloutEvents(wf, before, next));
  return out;
}

/** Ready=False InvalidSpec (every problem listed); no workflow (NM-4.7). */
export function invalidMaintenanceStatus(prev: NodeMaintenanceStatus | undefined, message: string, generation: number | undefined, now: Date): NodeMaintenanceStatus {
  return dropUndefined({
    message,
    observedGeneration: generation,
    conditions: setCondition(prev?.conditions, { type: 'Ready', status: 'False', reason: 'InvalidSpec', message, observedGeneration: generation }, now),
  });
}
