// The status mirror queries a workflow only after one of its workflow tasks completed, and looks for a
// failing task when one failed or timed out (history-batch.ts). What a batch of events means.
import { readBatch } from '../../starter/bridge/history-batch.js';

const completed = { workflowTaskCompletedEventAttributes: {} };
const failed = { workflowTaskFailedEventAttributes: { cause: 0 } };
const timedOut = { workflowTaskTimedOutEventAttributes: {} };
const signalled = {}; // any other event: a signal, an activity's completion, a scheduled task
const unset = { workflowTaskCompletedEventAttributes: null, workflowExecutionCompletedEventAttributes: null }; // the decoded proto's unset fields

test('events without a completed workflow task do not call for a query (the state cannot have changed yet)', () => {
  expect(readBatch([signalled, signalled, unset])).toEqual({ ran: false, childStarted: false, closed: false });
  expect(readBatch([])).toEqual({ ran: false, childStarted: false, closed: false });
});

test('a completed workflow task calls for a query, and is the newest task outcome', () => {
  expect(readBatch([signalled, completed])).toMatchObject({ ran: true, task: 'ok', closed: false });
});

test('the newest workflow-task outcome wins: a failure after a completion is trouble, a completion after a failure is not', () => {
  expect(readBatch([completed, failed]).task).toBe('trouble');
  expect(readBatch([completed, timedOut]).task).toBe('trouble');
  expect(readBatch([failed, completed]).task).toBe('ok');
  expect(readBatch([failed]).ran).toBe(false);
});

test('a started child is noticed (its tasks are looked at on a timer)', () => {
  expect(readBatch([{ childWorkflowExecutionStartedEventAttributes: {} }]).childStarted).toBe(true);
});

test('continue-as-new names the run to follow and calls for a query; a close of any kind ends the run', () => {
  expect(readBatch([completed, { workflowExecutionContinuedAsNewEventAttributes: { newExecutionRunId: 'r2' } }])).toMatchObject({ continuedAs: 'r2', ran: true, closed: false });
  for (const k of ['Completed', 'Failed', 'TimedOut', 'Canceled', 'Terminated']) {
    expect(readBatch([{ [`workflowExecution${k}EventAttributes`]: {} }]).closed).toBe(true);
  }
});
