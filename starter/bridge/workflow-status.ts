// What every kind's status mapper shares: where the workflow is (WorkflowRef), how it closed
// (ClosedWorkflow), the bookkeeping a status keeps for the same workflow, change detection and merge
// patches, the invalid-spec report, and the Events a status change calls for (StatusEvent).
import type { z } from 'zod';
import { canonical } from '../../api/canonical.js';
import { blockedPods, drainBlockers } from '../../shared/drain-blockers.js';

export { metaTime, setCondition, type ConditionInput } from '../../shared/conditions.js';

/** Where the workflow is, as far as the bridge knows. */
export interface WorkflowRef {
  workflowId: string;
  runId?: string;
}

/** A closed workflow's outcome, from describe() and result(). */
export interface ClosedWorkflow<S = unknown> {
  /** COMPLETED, FAILED, CANCELLED, TERMINATED, TIMED_OUT (the SDK's status names). */
  statusName: string;
  /** The workflow's return value (COMPLETED only). */
  result?: unknown;
  /** The failure message (anything but COMPLETED). */
  failure?: string;
  closeTime?: Date;
  /** The status query's answer after the close (a worker replays it), when there was one. */
  finalState?: S;
}

/** What a kind's status mapper is given: the status as stored, its workflow and the workflow's latest answer. */
export interface WorkflowStatusInput<P, S> {
  /** The object's current status (conditions' transition times are kept from it). */
  prev: P | undefined;
  workflow: WorkflowRef;
  /** The workflow's latest answer; undefined while the bridge has none yet (just started, query failing). */
  state: S | undefined;
  /** The generation the workflow has been sent. */
  observedGeneration: number | undefined;
  now: Date;
}

/** The fields every kind's status has about its workflow. */
export interface WorkflowFields {
  workflowId?: string;
  runId?: string;
  observedGeneration?: number;
}

/**
 * The status as stored, whether it is the same workflow's (a previous status of another workflow,
 * none or an invalid spec since fixed, is not carried over), and the workflow fields to write: the
 * run ID stays the stored one until the bridge learns it.
 */
export function sameWorkflow<P extends WorkflowFields>(i: Pick<WorkflowStatusInput<P, unknown>, 'prev' | 'workflow' | 'observedGeneration'>): { prev: P; same: boolean; fields: WorkflowFields } {
  const prev = (i.prev ?? {}) as P;
  const same = prev.workflowId === i.workflow.workflowId;
  return { prev, same, fields: { workflowId: i.workflow.workflowId, runId: i.workflow.runId ?? (same ? prev.runId : undefined), observedGeneration: i.observedGeneration } };
}

// ---- invalid spec -------------------------------------------------------------------------------

/** `spec.healthChecks[0].regexMatch`: a zod issue path in the apiserver's notation. */
export function fieldPath(path: readonly PropertyKey[], root = 'spec'): string {
  let out = root;
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : `.${String(p)}`;
  return out;
}

/** Every problem of an invalid spec, `path: message`, joined with "; ". */
export function invalidSpecMessage(error: z.ZodError): string {
  const problems = error.issues.map((i) => `${fieldPath(i.path)}: ${i.message}`);
  return `invalid spec: ${[...new Set(problems)].join('; ')}`;
}

// ---- change detection ---------------------------------------------------------------------------

/** Whether writing `next` would change `prev` (only the fields `next` manages). */
export function statusChanged(prev: object | undefined, next: object): boolean {
  return canonical(prev ?? {}) !== canonical(next);
}

/**
 * A JSON merge patch that turns the flat object `prev` into `next`: keys only in `prev` are removed
 * (null). Status values are scalars or arrays, which merge patch replaces whole.
 */
export function mergePatchOf(prev: object | undefined, next: object): Record<string, unknown> {
  const patch: Record<string, unknown> = dropUndefined({ ...next });
  for (const k of Object.keys(prev ?? {})) if (!(k in patch)) patch[k] = null;
  return patch;
}

export function dropUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

// ---- events -------------------------------------------------------------------------------------

export interface StatusEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  /** Stable for this occurrence (with the object's uid it names the Event: a retry writes nothing). */
  dedup: string;
}

/**
 * `DrainBlocked` (Warning) for each node whose drain has just become blocked: once per block, not
 * per retry or poll (a node that stays blocked, `before` says, gets none; the dedup key names its
 * blocked pods). `before` and `after` are the nodes draining then and now, with their drain messages.
 * Both kinds that drain nodes (CycleNodeRequest, NodeMaintenance) record it alike.
 */
export function drainBlockedEvents(workflowId: string, before: ReadonlyArray<{ name: string; message?: string }>, after: ReadonlyArray<{ name: string; message?: string }>): StatusEvent[] {
  const was = new Set(before.filter((n) => drainBlockers(n.message).length).map((n) => n.name));
  const out: StatusEvent[] = [];
  for (const n of after) {
    const blockers = drainBlockers(n.message);
    if (!blockers.length || was.has(n.name)) continue;
    out.push({
      type: 'Warning',
      reason: 'DrainBlocked',
      message: `drain of node ${n.name} is blocked:\n${blockers.map((b) => `* ${b}`).join('\n')}`,
      dedup: `${workflowId}/DrainBlocked/${n.name}/${blockers.map(blockedPods).join('|')}`,
    });
  }
  return out;
}

/**
 * A closed workflow takes no more edits, so once the bridge has seen it closed every generation
 * counts as observed (GitOps tools compare metadata.generation with status.observedGeneration, and
 * would otherwise wait for good). `actedOn`: the newest generation the workflow itself reported
 * acting on (setStage writes one); a newer one was never applied, which the caller says in an Event.
 */
export function closedGeneration(generation: number | undefined, tracked: number | undefined, actedOn?: number): { generation: number; applied: boolean } | undefined {
  if (generation === undefined || (tracked !== undefined && generation <= tracked)) return undefined;
  return { generation, applied: generation <= Math.max(tracked ?? 0, actedOn ?? 0) };
}
