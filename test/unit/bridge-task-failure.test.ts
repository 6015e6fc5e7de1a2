// Reading a workflow task that keeps failing from Temporal's answers: the pending task's attempt
// and the newest history events (only the first failure of a run of attempts is recorded).
import { failureText, taskFailureIn, type HistoryEventLike } from '../../starter/bridge/task-failure.js';

const failed = (eventId: number, message: string, type?: string, cause?: number): HistoryEventLike => ({
  eventId,
  workflowTaskFailedEventAttributes: { cause, failure: { message, applicationFailureInfo: type ? { type } : null } },
});
const completed = (eventId: number): HistoryEventLike => ({ eventId, workflowTaskCompletedEventAttributes: {} });
const timedOut = (eventId: number): HistoryEventLike => ({ eventId, workflowTaskTimedOutEventAttributes: {} });
const signaled = (eventId: number): HistoryEventLike => ({ eventId });

describe('taskFailureIn', () => {
  test('a task at attempt ≥ 2 whose newest outcome is a failure: that failure, with its event', () => {
    const events = [signaled(14), failed(13, 'Invalid time value', 'RangeError', 2 /* bad attributes */), completed(9)];
    expect(taskFailureIn('w/node/n1', 'r1', 5, events)).toEqual({ workflowId: 'w/node/n1', runId: 'r1', attempt: 5, error: 'RangeError: Invalid time value', eventId: '13' });
  });

  test('the first attempt is not failing yet', () => {
    expect(taskFailureIn('w', 'r', 1, [failed(3, 'x', 'Error')])).toBeUndefined();
  });

  test('a newest outcome that is a completion or a timeout (a worker that went away) is not a failure', () => {
    expect(taskFailureIn('w', 'r', 3, [completed(20), failed(13, 'old', 'Error')])).toBeUndefined();
    expect(taskFailureIn('w', 'r', 2, [timedOut(20), failed(13, 'old', 'Error')])).toBeUndefined();
  });

  test("the server's bookkeeping (an unhandled command, a sticky queue reset) is not a failure", () => {
    expect(taskFailureIn('w', 'r', 2, [failed(13, 'UnhandledCommand', undefined, 1)])).toBeUndefined();
    expect(taskFailureIn('w', 'r', 2, [failed(13, 'reset', undefined, 13)])).toBeUndefined();
  });

  test('no outcome among the events given: unknown (read further back)', () => {
    expect(taskFailureIn('w', 'r', 2, [signaled(5), signaled(4)])).toBe('unknown');
  });
});

describe('failureText', () => {
  test('Type: message, once, and the cause after it', () => {
    expect(failureText({ message: 'boom', applicationFailureInfo: { type: 'TypeError' } })).toBe('TypeError: boom');
    expect(failureText({ message: 'TypeError: boom', applicationFailureInfo: { type: 'TypeError' } })).toBe('TypeError: boom');
    expect(failureText({ message: 'outer', cause: { message: 'inner', applicationFailureInfo: { type: 'Error' } } })).toBe('outer: Error: inner');
    expect(failureText(undefined)).toBe('unknown error');
  });

  test("a task failure's type and the code that threw come from its stack trace (the SDK sends no type)", () => {
    const stackTrace = [
      '/app/workflow-bundle.js:6627',
      '            throw this.workflowTaskError;',
      '            ^',
      '',
      'RangeError: Invalid time value',
      '    at Date.toISOString (<anonymous>)',
      '    at cycleNodeWorkflow (/app/workflows/cycle/node.ts:49:41)',
    ].join('\n');
    expect(failureText({ message: 'Invalid time value', stackTrace })).toBe('RangeError: Invalid time value (at cycleNodeWorkflow (/app/workflows/cycle/node.ts:49:41))');
    expect(failureText({ message: 'no stack' })).toBe('no stack');
  });
});
