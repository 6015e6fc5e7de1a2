// The bridge's side of Temporal: start an object's workflow by name (one per object, replays are
// no-ops), query its status with a deadline, wait for it to close, send it updates, and look for a
// workflow task failing in it or its children. The helpers are kind-neutral; each kind binds them to
// its workflow (cycle/temporal.ts, maintenance/temporal.ts).
import type { SearchAttributePair, UpdateDefinition } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { isGrpcServiceError, WorkflowExecutionAlreadyStartedError, WorkflowFailedError, WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import type { ClosedWorkflow } from './workflow-status.js';
import { readBatch, type BatchEventLike, type HistoryBatch } from './history-batch.js';
import { FAILING_ATTEMPT, taskFailureIn, type HistoryEventLike, type TaskFailure } from './task-failure.js';
import { historyPollsFromEnv, PollSlots } from './poll-slots.js';

const FINAL_QUERY_TIMEOUT_MS = 2000;
const UPDATE_TIMEOUT_MS = 10_000;
const GRPC_NOT_FOUND = 5;
/** A request's tree: the request, its node children and their drains (and the node-group locks). */
const MAX_TREE_DEPTH = 2;
/** Describes per check at most; a tree larger than this is checked in part. */
const MAX_DESCRIBES = 64;
/** History events read back from the newest to find a task's failure. */
const HISTORY_PAGE = 100;
const HISTORY_PAGES = 3;

export interface Described {
  runId: string;
  statusName: string;
  closeTime?: Date;
}

export interface StartResult {
  workflowId: string;
  runId: string;
  /** The ID was taken already (running: attached to it; closed: never re-run). */
  existing: boolean;
}

/** What a tracker (tracker.ts) reads of a running workflow whose status query answers S. */
export interface TrackedSource<S> {
  /** The workflow's history as it grows, batch by batch (following continue-as-new); ends once it closes. */
  follow(workflowId: string, signal: AbortSignal): AsyncIterable<HistoryBatch>;
  /** The status query's answer; rejects after timeoutMs (no worker, workflow task not done yet). */
  query(workflowId: string, timeoutMs: number): Promise<S>;
  /** Resolves once the workflow (following continue-as-new) is closed, with its outcome. */
  waitClosed(workflowId: string, signal: AbortSignal): Promise<ClosedWorkflow<S>>;
  /**
   * A workflow task failing again and again in the running workflow or one of its running
   * children (checked top down; the first found), and whether the workflow has children running.
   */
  taskFailure(workflowId: string): Promise<TaskCheck>;
}

export interface TaskCheck {
  failure?: TaskFailure;
  /** Children run: their tasks are not in this workflow's history, so they are looked at on a timer. */
  children: boolean;
}

/**
 * Runs `fn`'s calls abortable by `signal`, through a controller of their own: the SDK adds an abort
 * listener to the signal for every call and never removes it, so a long-lived signal (a tracked
 * workflow's, followed for days) must not be handed to it directly.
 */
export async function abortableBy<T>(client: Client, signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
  signal.throwIfAborted();
  const own = new AbortController();
  const abort = () => own.abort(signal.reason);
  signal.addEventListener('abort', abort, { once: true });
  try {
    return await client.withAbortSignal(own.signal, fn);
  } finally {
    signal.removeEventListener('abort', abort);
  }
}

/** The workflow's run and status, or undefined when no workflow has this ID. */
export async function describeWorkflow(client: Client, workflowId: string): Promise<Described | undefined> {
  try {
    const d = await client.workflow.getHandle(workflowId).describe();
    return { runId: d.runId, statusName: d.status.name, closeTime: d.closeTime };
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}

/**
 * Resolves once the workflow (following continue-as-new) is closed, with its outcome. A failed or
 * cancelled workflow's last word comes from `finalQuery` (queries still work once closed: a worker
 * replays the history); `isState` checks it.
 */
export async function waitWorkflowClosed<S>(
  client: Client,
  workflowId: string,
  signal: AbortSignal,
  finalQuery: (handle: ReturnType<Client['workflow']['getHandle']>) => Promise<unknown>,
  isState: (v: unknown) => v is S,
): Promise<ClosedWorkflow<S>> {
  const handle = client.workflow.getHandle(workflowId);
  let result: unknown;
  let failure: string | undefined;
  try {
    result = await abortableBy(client, signal, () => handle.result());
  } catch (err) {
    if (!(err instanceof WorkflowFailedError)) throw err;
    failure = err.cause?.message || err.message;
  }
  const d = await describeWorkflow(client, workflowId);
  const statusName = d?.statusName ?? (failure === undefined ? 'COMPLETED' : 'FAILED');
  let finalState: S | undefined;
  if (statusName !== 'COMPLETED') {
    try {
      const q = await client.withDeadline(Date.now() + FINAL_QUERY_TIMEOUT_MS, () => finalQuery(handle));
      if (isState(q)) finalState = q;
    } catch {
      // no worker, or the workflow never answered: the last answer seen is used
    }
  }
  return { statusName, result, failure, closeTime: d?.closeTime, finalState };
}

/** The bridge's history long-polls, all kinds together (poll-slots.ts: Temporal limits them per namespace). */
export const historyPolls = new PollSlots(historyPollsFromEnv());

/**
 * Long-polls a workflow's history (Temporal answers when events are added, or empty after its
 * long-poll interval), batch by batch from the start of the current run, following continue-as-new.
 * Ends once the workflow closes. What a batch means is read in history-batch.ts.
 */
export async function* followHistory(client: Client, workflowId: string, signal: AbortSignal, slots: PollSlots = historyPolls): AsyncGenerator<HistoryBatch> {
  const svc = client.workflowService;
  const namespace = client.options.namespace;
  const d = await abortableBy(client, signal, () => svc.describeWorkflowExecution({ namespace, execution: { workflowId } }));
  let runId = d.workflowExecutionInfo?.execution?.runId ?? undefined;
  let nextPageToken: Uint8Array | undefined;
  let busy = true; // the first read has the history so far
  for (;;) {
    const r: temporal.api.workflowservice.v1.IGetWorkflowExecutionHistoryResponse = await slots.run(busy, signal, () =>
      abortableBy(client, signal, () => svc.getWorkflowExecutionHistory({ namespace, execution: { workflowId, runId }, nextPageToken, waitNewEvent: true, skipArchival: true })),
    );
    busy = (r.history?.events?.length ?? 0) > 0;
    const b = readBatch((r.history?.events ?? []) as BatchEventLike[]);
    if (b.ran || b.task || b.childStarted || b.closed || b.continuedAs !== undefined) yield b;
    if (b.closed) return;
    if (b.continuedAs !== undefined) {
      runId = b.continuedAs || undefined;
      nextPageToken = undefined;
      continue;
    }
    // A running workflow's history always has a next page to wait on; none means it is closed.
    if (!r.nextPageToken?.length) return;
    nextPageToken = r.nextPageToken;
  }
}

/**
 * A workflow task failing again and again in the running workflow or one of its running children
 * (checked top down; the first found), and whether it has children running.
 */
export async function workflowTaskFailure(client: Client, workflowId: string): Promise<TaskCheck> {
  let children = false;
  const namespace = client.options.namespace;
  const svc = client.workflowService;
  let budget = MAX_DESCRIBES;
  const failureOf = async (id: string, runId: string, attempt: number): Promise<TaskFailure | undefined> => {
    let nextPageToken: Uint8Array | undefined;
    for (let page = 0; page < HISTORY_PAGES; page++) {
      const h = await svc.getWorkflowExecutionHistoryReverse({ namespace, execution: { workflowId: id, runId }, maximumPageSize: HISTORY_PAGE, nextPageToken });
      const found = taskFailureIn(id, runId, attempt, (h.history?.events ?? []) as HistoryEventLike[]);
      if (found !== 'unknown') return found;
      nextPageToken = h.nextPageToken ?? undefined;
      if (!nextPageToken?.length) break;
    }
    return { workflowId: id, runId, attempt, error: `attempt ${attempt}; the failure is not among the newest ${HISTORY_PAGE * HISTORY_PAGES} history events`, eventId: 'unknown' };
  };
  const walk = async (id: string, runId: string | undefined, depth: number): Promise<TaskFailure | undefined> => {
    if (budget-- <= 0) return undefined;
    let d;
    try {
      d = await svc.describeWorkflowExecution({ namespace, execution: { workflowId: id, runId } });
    } catch (err) {
      if (isGrpcServiceError(err) && err.code === GRPC_NOT_FOUND) return undefined; // closed and gone meanwhile
      throw err;
    }
    const run = d.workflowExecutionInfo?.execution?.runId ?? runId;
    const attempt = d.pendingWorkflowTask?.attempt ?? 0;
    if (depth === 0) children = (d.pendingChildren?.length ?? 0) > 0;
    if (attempt >= FAILING_ATTEMPT && run) {
      const f = await failureOf(id, run, attempt);
      if (f) return f;
    }
    if (depth >= MAX_TREE_DEPTH) return undefined;
    for (const c of d.pendingChildren ?? []) {
      if (!c.workflowId) continue;
      const f = await walk(c.workflowId, c.runId ?? undefined, depth + 1);
      if (f) return f;
    }
    return undefined;
  };
  const failure = await walk(workflowId, undefined, 0);
  return { failure, children };
}

/** What a kind's workflow is started with (the ID policies are startOnce's). */
export interface StartOnce {
  workflowId: string;
  taskQueue: string;
  args: unknown[];
  typedSearchAttributes: SearchAttributePair[];
  staticSummary: string;
}

/**
 * Starts a workflow once per ID: a running one is attached to (USE_EXISTING), a closed one is never
 * re-run (REJECT_DUPLICATE), so replayed events and restarted bridges start nothing twice.
 */
export async function startOnce(client: Client, workflowType: string, o: StartOnce): Promise<StartResult> {
  try {
    const handle = await client.workflow.start(workflowType, { ...o, workflowIdConflictPolicy: 'USE_EXISTING', workflowIdReusePolicy: 'REJECT_DUPLICATE' });
    return { workflowId: o.workflowId, runId: handle.firstExecutionRunId, existing: false };
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
    const d = await describeWorkflow(client, o.workflowId);
    return { workflowId: o.workflowId, runId: d?.runId ?? '', existing: true };
  }
}

/**
 * Sends an update and waits for its outcome: applied (with the answer) or refused by its validator
 * or handler (why, in the workflow's words). Bounded: without a worker the update would wait; the
 * reconcile is retried later instead.
 */
export async function sendUpdate<R, A extends [unknown]>(
  client: Client,
  workflowId: string,
  def: UpdateDefinition<R, A>,
  args: A,
): Promise<{ applied: true; result: R } | UpdateNotApplied> {
  try {
    const result = await client.withDeadline(Date.now() + UPDATE_TIMEOUT_MS, () => client.workflow.getHandle(workflowId).executeUpdate(def, { args }));
    return { applied: true, result };
  } catch (err) {
    if (err instanceof WorkflowUpdateFailedError) return { applied: false, reason: err.cause?.message ?? err.message };
    // Closed before the update reached it ("workflow update was aborted by closing workflow"):
    // the close report that follows settles the generation (workflow-status.ts closedGeneration).
    if (err instanceof WorkflowNotFoundError) return { applied: false, closed: true, reason: err.message };
    throw err;
  }
}

/** An update refused by the workflow, or never delivered because the workflow closed first (`closed`). */
export interface UpdateNotApplied {
  applied: false;
  reason: string;
  closed?: true;
}
