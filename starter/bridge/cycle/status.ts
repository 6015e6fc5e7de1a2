// Pure mapping from a cycle workflow's state to the status of its CycleNodeRequest and
// CycleNodeStatus objects: phase, nodes (with what blocks their drains), metav1 Conditions
// (lastTransitionTime kept while a condition's status stays the same), a failing workflow task,
// the Events a change calls for, and the invalid-spec status (the kit they share: ../workflow-status.ts).
import {
  CycleRequestPhase,
  type Condition,
  type CycleNodeSummary,
  type CycleNodeRequestStatus,
  type CycleNodeStatusStatus,
} from '../../../api/cycle-node-request.js';
import type { CycleStatus, CycleNodeStatus } from '../../../workflows/cycle/types.js';
import type { TaskFailure } from '../task-failure.js';
import { returnReason } from '../../../workflows/drain/status.js';
import { countByPhase, fitBudget, listedNodes } from './listed.js';

type Phase = CycleRequestPhase;
const TERMINAL: ReadonlySet<Phase> = new Set<Phase>(['Successful', 'Failed']);
export const isTerminalPhase = (p: Phase | undefined) => p !== undefined && TERMINAL.has(p);

import { setCondition } from '../../../shared/conditions.js';
import { dropUndefined, sameWorkflow, type ClosedWorkflow, type StatusEvent, type WorkflowStatusInput, drainBlockedEvents } from '../workflow-status.js';

// ---- conditions (setCondition: shared/conditions.ts) ------------------------------------------

/** Ready (True when Successful, False when Failed, else Unknown) and Progressing (True until terminal). */
export function phaseConditions(
  prev: Condition[] | undefined,
  phase: Phase,
  message: string,
  progress: string,
  now: Date,
  observedGeneration?: number,
  reason: string = phase,
): Condition[] {
  const ready: Condition['status'] = phase === 'Successful' ? 'True' : phase === 'Failed' ? 'False' : 'Unknown';
  const progressing: Condition['status'] = isTerminalPhase(phase) ? 'False' : 'True';
  let c = setCondition(prev, { type: 'Ready', status: ready, reason, message, observedGeneration }, now);
  c = setCondition(c, { type: 'Progressing', status: progressing, reason, message: progress, observedGeneration }, now);
  return c;
}

// ---- what blocks a drain (shared/drain-blockers.ts) ------------------------------------------------

import { nodesMessage } from '../../../shared/drain-blockers.js';

/** The drain's message of a node while it drains (the workflow clears it after; this makes sure). */
const drainOf = (n: CycleNodeStatus) => (n.phase === 'DrainingPods' ? n.drainMessage : undefined);

/** A node's entry in status.nodes: its message is its own and, while it drains, its drain's. */
const summaryOf = (n: CycleNodeStatus): CycleNodeSummary =>
  dropUndefined({
    name: n.nodeName,
    providerID: n.providerID,
    nodeGroup: n.nodeGroup,
    phase: n.phase,
    message: [n.message, drainOf(n)].filter(Boolean).join('\n') || undefined,
  });

/**
 * The Ready message while nodes drain, in Cluster API's aggregated shape: the request's message,
 * then one `* Node <name>: <drain message>` per draining node that reported one (blocked ones
 * first), its lines indented under it; beyond a few nodes, how many more.
 */
export function readyMessage(message: string, nodes: readonly CycleNodeSummary[] | undefined): string {
  return nodesMessage(message, (nodes ?? []).filter((n) => n.phase === 'DrainingPods').map((n) => ({ name: n.name, message: n.message ?? '' })));
}

// ---- a failing workflow task --------------------------------------------------------------------

export const TASK_FAILING = 'WorkflowTaskFailing';

export const taskFailureMessage = (f: TaskFailure) =>
  `workflow task of ${f.workflowId} keeps failing (Temporal retries it until the workflow code or its input is fixed): ${f.error}`;

// ---- request status -----------------------------------------------------------------------------

/** Whether a value (a query answer or a workflow result) has the shape of a CycleStatus. */
export function isCycleStatus(v: unknown): v is CycleStatus {
  if (typeof v !== 'object' || v === null) return false;
  const s = v as Partial<CycleStatus>;
  return CycleRequestPhase.safeParse(s.phase).success && Array.isArray(s.nodes) && typeof s.nodesTotal === 'number' && typeof s.nodesCycled === 'number';
}

export interface StatusInput extends WorkflowStatusInput<CycleNodeRequestStatus, CycleStatus> {
  /** A workflow task of the running workflow (or a child) that keeps failing. */
  taskFailure?: TaskFailure;
  /** `label=value` selecting the request's CycleNodeStatus objects (named when status.nodes[] is cut). */
  requestLabel?: string;
}

/** The status to write for a request with a workflow. Without a state, the previous one is kept (Pending at first). */
export function requestStatus(i: StatusInput): CycleNodeRequestStatus {
  const { prev, same, fields } = sameWorkflow(i);
  const started = `workflow ${i.workflow.workflowId} started`;
  const listed = i.state ? listedNodes(same ? prev.nodes : undefined, i.state.nodes.map(summaryOf)) : undefined;
  const base: CycleNodeRequestStatus = i.state && listed
    ? {
        phase: i.state.phase,
        message: i.state.message,
        nodes: listed,
        nodesByPhase: i.state.nodesByPhase ?? countByPhase(i.state.nodes),
        nodesNotListed: Math.max(0, i.state.nodesTotal - listed.length),
        nodesCycled: i.state.nodesCycled,
        nodesTotal: i.state.nodesTotal,
        startedAt: i.state.startedAt,
        completedAt: i.state.completedAt,
      }
    : same
      ? {
          phase: prev.phase ?? 'Pending',
          message: prev.message || started,
          nodes: prev.nodes,
          nodesByPhase: prev.nodesByPhase,
          nodesNotListed: prev.nodesNotListed,
          nodesCycled: prev.nodesCycled,
          nodesTotal: prev.nodesTotal,
          startedAt: prev.startedAt,
          completedAt: prev.completedAt,
        }
      : { phase: 'Pending', message: started };
  const phase = base.phase!;
  const progress = base.nodesTotal !== undefined ? `${base.nodesCycled ?? 0}/${base.nodesTotal} nodes cycled` : phase;
  // While it runs, Ready also says what the draining nodes wait for; once ended, only how it ended.
  const ready = isTerminalPhase(phase) ? (base.message ?? '') : readyMessage(base.message ?? '', base.nodes);
  let conditions = phaseConditions(prev.conditions, phase, ready, progress, i.now, i.observedGeneration);
  // A task that keeps failing stops the workflow where it is, while it still shows as running:
  // that, not the last phase message, is what Ready and the message must say.
  const failing = i.taskFailure && !isTerminalPhase(phase) ? taskFailureMessage(i.taskFailure) : undefined;
  if (failing) {
    conditions = setCondition(conditions, { type: 'Ready', status: 'False', reason: TASK_FAILING, message: failing, observedGeneration: i.observedGeneration }, i.now);
  }
  return fitBudget(
    dropUndefined({
      ...base,
      message: failing ?? base.message,
      ...fields,
      conditions,
    }),
    i.requestLabel,
  );
}

/**
 * A closed workflow's final state as a CycleStatus: a completed workflow's CycleStatus result as is;
 * otherwise its final query answer (else the last one seen) with phase Failed and the failure (or
 * Successful for a completion without a CycleStatus result).
 */
export function closedState(closed: ClosedWorkflow<CycleStatus>, lastSeen: CycleStatus | undefined, workflowId: string): CycleStatus {
  if (closed.statusName === 'COMPLETED' && isCycleStatus(closed.result)) return closed.result;
  const last = closed.finalState ?? lastSeen;
  const completedAt = last?.completedAt ?? (closed.closeTime ? closed.closeTime.toISOString() : undefined);
  const kept = { nodes: last?.nodes ?? [], nodesCycled: last?.nodesCycled ?? 0, nodesTotal: last?.nodesTotal ?? 0, nodesByPhase: last?.nodesByPhase, startedAt: last?.startedAt, completedAt };
  if (closed.statusName === 'COMPLETED') {
    const phase = last && isTerminalPhase(last.phase) ? last.phase : 'Successful';
    return dropUndefined({ ...kept, phase, message: last?.message || `workflow ${workflowId} completed` });
  }
  const what = closed.statusName.toLowerCase().replace(/_/g, ' ');
  return dropUndefined({ ...kept, phase: 'Failed', message: `workflow ${what}${closed.failure ? `: ${closed.failure}` : ''}` });
}

/** The CycleStatus a stored status describes (after a bridge restart, before the first query answers). */
export function stateFromStatus(s: CycleNodeRequestStatus | undefined): CycleStatus | undefined {
  if (!s?.phase) return undefined;
  return dropUndefined({
    phase: s.phase,
    message: s.message ?? '',
    nodes: (s.nodes ?? []).map((n) => dropUndefined({ nodeName: n.name, phase: n.phase, message: n.message, providerID: n.providerID, nodeGroup: n.nodeGroup })),
    nodesCycled: s.nodesCycled ?? 0,
    nodesTotal: s.nodesTotal ?? 0,
    nodesByPhase: s.nodesByPhase,
    startedAt: s.startedAt,
    completedAt: s.completedAt,
  });
}

// ---- invalid spec -------------------------------------------------------------------------------

/** Phase Failed with Ready=False and Progressing=False, reason InvalidSpec. No workflow. */
export function invalidSpecStatus(prev: CycleNodeRequestStatus | undefined, message: string, generation: number | undefined, now: Date): CycleNodeRequestStatus {
  return dropUndefined({
    phase: 'Failed' as const,
    message,
    observedGeneration: generation,
    conditions: phaseConditions(prev?.conditions, 'Failed', message, 'the spec is invalid: no workflow started', now, generation, 'InvalidSpec'),
  });
}

// ---- CycleNodeStatus ----------------------------------------------------------------------------

/**
 * Whether the bridge may create a request's CycleNodeStatus objects: only while the request lives,
 * i.e. it is not being deleted and the end of its workflow is not recorded in its status yet. A
 * finished or deleted request never creates anything: what garbage collection, the namespace
 * controller or a user deleted stays deleted (and a terminating namespace refuses creates anyway).
 * Existing objects are still brought up to date.
 */
export function mayCreateNodeStatuses(req: { metadata: { deletionTimestamp?: unknown }; status?: CycleNodeRequestStatus }, workflowId: string): boolean {
  if (req.metadata.deletionTimestamp) return false;
  return !(req.status?.workflowId === workflowId && isTerminalPhase(req.status.phase));
}

export function nodeStatus(n: CycleNodeStatus, observedGeneration?: number): CycleNodeStatusStatus {
  return dropUndefined({
    observedGeneration,
    phase: n.phase,
    message: n.message,
    providerID: n.providerID,
    nodeGroup: n.nodeGroup,
    startedAt: n.startedAt,
    timeoutAt: n.timeoutAt,
    evicted: n.evicted,
    drainMessage: n.drainMessage,
    returning: n.returning?.length ? n.returning : undefined,
  });
}

// ---- events -------------------------------------------------------------------------------------

/** The Event for a phase change: Normal `Phase<Phase>`, Warning for Failed. */
export function phaseEvent(from: Phase | undefined, to: Phase, message: string): { type: 'Normal' | 'Warning'; reason: string; message: string } | undefined {
  if (from === to) return undefined;
  return { type: to === 'Failed' ? 'Warning' : 'Normal', reason: `Phase${to}`, message: `${from ?? 'none'} → ${to}${message ? `: ${message}` : ''}` };
}

/**
 * The Events a status change calls for: the phase change; `DrainBlocked` (Warning) for each node
 * whose drain has just become blocked (drainBlockedEvents); `WorkflowTaskFailing` (Warning) when a workflow task starts failing.
 */
export function statusEvents(prev: CycleNodeRequestStatus | undefined, next: CycleNodeRequestStatus, workflowId: string, taskFailure?: TaskFailure): StatusEvent[] {
  const out: StatusEvent[] = [];
  const ev = phaseEvent(prev?.phase, next.phase!, next.message ?? '');
  if (ev) out.push({ ...ev, dedup: `${workflowId}/${prev?.phase ?? ''}->${next.phase}` });
  const draining = (nodes: CycleNodeRequestStatus['nodes']) => (nodes ?? []).filter((n) => n.phase === 'DrainingPods').map((n) => ({ name: n.name, message: n.message }));
  out.push(...drainBlockedEvents(workflowId, draining(prev?.workflowId === workflowId ? prev.nodes : undefined), draining(next.nodes)));
  const failing = next.conditions?.find((c) => c.type === 'Ready' && c.reason === TASK_FAILING);
  const wasFailing = prev?.conditions?.some((c) => c.type === 'Ready' && c.reason === TASK_FAILING && c.message === failing?.message);
  if (failing && taskFailure && !wasFailing) {
    out.push({
      type: 'Warning',
      reason: TASK_FAILING,
      message: `${taskFailureMessage(taskFailure)} (attempt ${taskFailure.attempt})`,
      dedup: `${taskFailure.workflowId}/${taskFailure.runId ?? ''}/${TASK_FAILING}/${taskFailure.eventId}`,
    });
  }
  return out;
}

/**
 * A Warning `PodLeftOnNode` for each pod a node's drain left on it (it kept coming back after
 * eviction) when the node has just been cycled, i.e. deleted with the pod on it: once per pod and
 * node (the dedup key names both), so whoever reads the request's Events learns of it.
 */
export function podLeftEvents(prev: CycleNodeRequestStatus | undefined, nodes: readonly CycleNodeStatus[], workflowId: string, cycledAlready: (node: string) => boolean = () => false): StatusEvent[] {
  // status.nodes[] lists only the last nodes cycled: a node's own CycleNodeStatus remembers the rest.
  const cycledBefore = new Set((prev?.workflowId === workflowId ? (prev.nodes ?? []) : []).filter((n) => n.phase === 'Successful').map((n) => n.name));
  return nodes
    .filter((n) => n.phase === 'Successful' && !cycledBefore.has(n.nodeName) && !cycledAlready(n.nodeName))
    .flatMap((n) =>
      (n.returning ?? []).map((r) => ({
        type: 'Warning' as const,
        reason: 'PodLeftOnNode',
        message: `Pod ${r.pod} was on node ${n.nodeName} when the node was deleted: ${returnReason(r.reason)}`,
        dedup: `${workflowId}/PodLeftOnNode/${n.nodeName}/${r.pod}`,
      })),
    );
}

/** A closed workflow's nodes as it reported them itself (result or final query), for CycleNodeStatus. */
export function closedNodes(closed: ClosedWorkflow<CycleStatus>): CycleNodeStatus[] | undefined {
  if (closed.statusName === 'COMPLETED' && isCycleStatus(closed.result)) return closed.result.nodes;
  return closed.finalState?.nodes;
}
