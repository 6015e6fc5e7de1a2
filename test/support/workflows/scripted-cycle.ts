// A stand-in cycle workflow for the bridge's tests: a real Temporal workflow, registered under the
// real type name, whose cycleStatus answers are scripted by the test through signals. It lets the
// tests drive every phase the bridge must mirror, at the moment they choose.
import { ApplicationFailure, CancellationScope, condition, defineSignal, isCancellation, setHandler, startChild, workflowInfo } from '@temporalio/workflow';
import { nodeCycleWorkflowId, type CycleRequestInput, type CycleStatus } from '../../../workflows/cycle/types.js';
import { cycleStatusQuery } from '../../../workflows/messages.js';

/** Replaces the status the cycleStatus query returns. */
export const scriptStatusSignal = defineSignal<[CycleStatus]>('scriptStatus');
/** Ends the workflow: completes with `result` (default: the current status) or fails with `fail` (after setting `status`). */
export const scriptFinishSignal = defineSignal<[ScriptFinish]>('scriptFinish');

/**
 * A bug in workflow code, as Temporal sees one: a plain Error thrown fails the workflow *task*, which
 * the server retries for ever (the signal is replayed each time, so every attempt fails the same way).
 * `self`: in this workflow; `child`: in a node child (`<id>/node/<node>`) that it starts.
 */
export const scriptBreakSignal = defineSignal<[ScriptBreak]>('scriptBreak');

export interface ScriptBreak {
  where: 'self' | 'child';
  message: string;
  /** The child's node name (default `broken`). */
  node?: string;
}

/** A node child whose every workflow task fails with `message`. */
export async function brokenNodeWorkflow(message: string): Promise<void> {
  throw new RangeError(message);
}

export interface ScriptFinish {
  result?: CycleStatus;
  fail?: string;
  /** The status the query answers from then on (also after the close). */
  status?: CycleStatus;
}

export async function cycleNodeRequestWorkflow(input: CycleRequestInput): Promise<CycleStatus> {
  let status: CycleStatus = { phase: 'Pending', message: `scripted cycle of ${input.request.namespace}/${input.request.name}`, nodes: [], nodesCycled: 0, nodesTotal: 0 };
  let finish: ScriptFinish | undefined;
  setHandler(cycleStatusQuery, () => status);
  setHandler(scriptStatusSignal, (s) => {
    status = s;
  });
  setHandler(scriptBreakSignal, (b) => {
    if (b.where === 'self') throw new TypeError(b.message);
    void startChild(brokenNodeWorkflow, { workflowId: nodeCycleWorkflowId(workflowInfo().workflowId, b.node ?? 'broken'), args: [b.message] });
  });
  setHandler(scriptFinishSignal, (f) => {
    finish = f;
    if (f.status) status = f.status;
  });
  try {
    await condition(() => finish !== undefined);
  } catch (err) {
    if (!isCancellation(err)) throw err;
    // Compensations: visible as Healing for a moment (or until the test finishes it), then cancelled.
    status = { ...status, phase: 'Healing', message: 'cancelled: compensating' };
    await CancellationScope.nonCancellable(() => condition(() => finish !== undefined, '3 seconds'));
    throw err;
  }
  if (finish!.fail) throw ApplicationFailure.nonRetryable(finish!.fail, 'ScriptedFailure');
  return finish!.result ?? status;
}
