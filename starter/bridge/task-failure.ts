// A workflow task that keeps failing, read from what Temporal tells about a workflow: describe's
// pending workflow task (its attempt) and the newest events of its history. Temporal records only
// a task's first failure in the history; later attempts are transient (not recorded) until one
// succeeds, so the newest workflow-task outcome in the history is that first failure.
// Pure: the calls are in temporal.ts.

/** A workflow task of the request's workflow, or of one of its children, that fails again and again. */
export interface TaskFailure {
  workflowId: string;
  runId?: string;
  /** The task's attempt when last seen (Temporal retries it until the code or its input changes). */
  attempt: number;
  /** The error, `Type: message`. */
  error: string;
  /** The history event of the first failure (one Event per failure, however many attempts). */
  eventId: string;
}

/** The parts of a history event read here (the SDK's decoded proto). */
export interface HistoryEventLike {
  eventId?: { toString(): string } | number | null;
  workflowTaskCompletedEventAttributes?: unknown;
  workflowTaskTimedOutEventAttributes?: unknown;
  workflowTaskFailedEventAttributes?: {
    cause?: number | null;
    failure?: FailureLike | null;
  } | null;
}

interface FailureLike {
  message?: string | null;
  stackTrace?: string | null;
  applicationFailureInfo?: { type?: string | null } | null;
  cause?: FailureLike | null;
}

/** Causes of a failed workflow task that are the server's bookkeeping, retried at once: not a bug. */
const BENIGN_CAUSES = new Set([
  1, // UNHANDLED_COMMAND: a new event arrived while the task completed
  13, // RESET_STICKY_TASK_QUEUE
]);

/** A second attempt at least: one failure can be a worker's restart. */
export const FAILING_ATTEMPT = 2;

/**
 * The error's type and the workflow code that threw it, from a stack trace: the SDK sends a task
 * failure's type only there (`RangeError: Invalid time value\n    at cycleNodeWorkflow (…:55:8)`).
 */
function fromStack(stack: string | null | undefined, message: string): { type?: string; at?: string } {
  const lines = (stack ?? '').split('\n');
  const i = lines.findIndex((l) => /^[A-Z][\w$]*: /.test(l) && l.slice(l.indexOf(': ') + 2).startsWith(message.split('\n')[0]!));
  if (i < 0) return {};
  // The first frame in code (not a built-in like Date.toISOString).
  const at = lines.slice(i + 1).find((l) => /^\s+at /.test(l) && !/<anonymous>|\(node:/.test(l))?.trim().slice(3);
  return { type: lines[i]!.slice(0, lines[i]!.indexOf(': ')), at };
}

/** `Type: message (at <frame>)`, and the cause's, as the SDK encoded a thrown error. */
export function failureText(f: FailureLike | null | undefined): string {
  if (!f) return 'unknown error';
  const msg = f.message ?? '';
  const stack = fromStack(f.stackTrace, msg);
  const type = f.applicationFailureInfo?.type || stack.type;
  let own = type && !msg.startsWith(`${type}:`) ? `${type}: ${msg}` : msg;
  if (stack.at) own += ` (at ${stack.at})`;
  const cause = f.cause ? failureText(f.cause) : '';
  return cause && !own.includes(cause) ? `${own}: ${cause}` : own || 'unknown error';
}

/**
 * The failure behind a pending workflow task at `attempt`, from history events newest first:
 * the newest workflow-task outcome must be a failure that is not bookkeeping. undefined when the
 * task is not failing (first attempt, or the last outcome was a completion or a timeout), and
 * 'unknown' when the events given do not reach back to the outcome (look further).
 */
export function taskFailureIn(
  workflowId: string,
  runId: string | undefined,
  attempt: number,
  eventsNewestFirst: readonly HistoryEventLike[],
): TaskFailure | undefined | 'unknown' {
  if (attempt < FAILING_ATTEMPT) return undefined;
  for (const e of eventsNewestFirst) {
    if (e.workflowTaskCompletedEventAttributes || e.workflowTaskTimedOutEventAttributes) return undefined;
    const failed = e.workflowTaskFailedEventAttributes;
    if (!failed) continue;
    if (BENIGN_CAUSES.has(failed.cause ?? 0)) return undefined;
    return { workflowId, runId, attempt, error: failureText(failed.failure), eventId: String(e.eventId ?? '') };
  }
  return 'unknown';
}
