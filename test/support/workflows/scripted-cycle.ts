// A stand-in cycle workflow for the bridge's tests: a real Temporal workflow, registered under the
// real type name, whose cycleStatus answers are scripted by the test through signals. It lets the
// tests drive every phase the bridge must mirror, at the moment they choose.
import { ApplicationFailure, CancellationScope, condition, defineSignal, isCancellation, setHandler } from '@temporalio/workflow';
import type { CycleRequestInput, CycleStatus } from '../../../workflows/cycle/types.js';
import { cycleStatusQuery } from '../../../workflows/messages.js';

/** Replaces the status the cycleStatus query returns. */
export const scriptStatusSignal = defineSignal<[CycleStatus]>('scriptStatus');
/** Ends the workflow: completes with `result` (default: the current status) or fails with `fail` (after setting `status`). */
export const scriptFinishSignal = defineSignal<[ScriptFinish]>('scriptFinish');

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
