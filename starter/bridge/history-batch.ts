// What a batch of new history events says to the status mirror (tracker.ts), which follows each
// running workflow's history with a long-poll instead of querying it on a timer: the workflow's state
// can only change in a workflow task, so a completed task is the cue to query; a failed or timed-out
// one is the cue to look for a task that keeps failing; continue-as-new hands over to the new run.
// Pure: the long-poll is in temporal.ts.

/** The parts of a history event read here (the SDK's decoded proto: an unset attribute is null or absent). */
export interface BatchEventLike {
  workflowTaskCompletedEventAttributes?: unknown;
  workflowTaskFailedEventAttributes?: unknown;
  workflowTaskTimedOutEventAttributes?: unknown;
  childWorkflowExecutionStartedEventAttributes?: unknown;
  workflowExecutionContinuedAsNewEventAttributes?: { newExecutionRunId?: string | null } | null;
  workflowExecutionCompletedEventAttributes?: unknown;
  workflowExecutionFailedEventAttributes?: unknown;
  workflowExecutionTimedOutEventAttributes?: unknown;
  workflowExecutionCanceledEventAttributes?: unknown;
  workflowExecutionTerminatedEventAttributes?: unknown;
}

export interface HistoryBatch {
  /** A workflow task completed: the workflow's state may have changed (query it). */
  ran: boolean;
  /** The newest workflow-task outcome in the batch: ok (completed) or trouble (failed, timed out). */
  task?: 'ok' | 'trouble';
  /** A child workflow started (its tasks are not in this history: look at them on a timer). */
  childStarted: boolean;
  /** The run continued as new: follow this run next. */
  continuedAs?: string;
  /** The workflow closed (completed, failed, timed out, cancelled or terminated). */
  closed: boolean;
}

export function readBatch(events: readonly BatchEventLike[]): HistoryBatch {
  const b: HistoryBatch = { ran: false, childStarted: false, closed: false };
  for (const e of events) {
    if (e.workflowTaskCompletedEventAttributes) {
      b.ran = true;
      b.task = 'ok';
    } else if (e.workflowTaskFailedEventAttributes || e.workflowTaskTimedOutEventAttributes) {
      b.task = 'trouble';
    } else if (e.childWorkflowExecutionStartedEventAttributes) {
      b.childStarted = true;
    } else if (e.workflowExecutionContinuedAsNewEventAttributes) {
      b.continuedAs = e.workflowExecutionContinuedAsNewEventAttributes.newExecutionRunId ?? undefined;
      b.ran = true; // the new run starts from the carried state: look at it
    } else if (
      e.workflowExecutionCompletedEventAttributes ||
      e.workflowExecutionFailedEventAttributes ||
      e.workflowExecutionTimedOutEventAttributes ||
      e.workflowExecutionCanceledEventAttributes ||
      e.workflowExecutionTerminatedEventAttributes
    ) {
      b.closed = true;
    }
  }
  return b;
}
