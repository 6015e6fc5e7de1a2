// The drift observer of one NodeGroup: a pass (the observeNodeGroup activity reads, decides and
// writes), then a durable sleep of the NodeGroup's interval, woken early by observeNow (the bridge
// sends it when the object changes). Ends when its object is gone; continues as new before its
// history grows long. Each pass's outcome is the workflow's current details in the Web UI.
import { condition, continueAsNew, setCurrentDetails, setHandler, workflowInfo } from '@temporalio/workflow';
import type { ObserveInput } from '../../activities/node-group/observe.js';
import { observeNowSignal } from '../messages.js';
import { steps } from '../proxies.js';

export async function nodeGroupObserverWorkflow(input: ObserveInput): Promise<void> {
  let wake = false;
  setHandler(observeNowSignal, () => {
    wake = true;
  });
  for (;;) {
    wake = false;
    const r = await steps.observeNodeGroup(input);
    if (r.gone) return;
    setCurrentDetails(`**NodeGroup ${input.name}**\n\n${r.message}${r.created ? `\n\ncreated CycleNodeRequest ${r.created}` : ''}`);
    await condition(() => wake, r.intervalMs);
    if (workflowInfo().continueAsNewSuggested || workflowInfo().historyLength > 2000) await continueAsNew<typeof nodeGroupObserverWorkflow>(input);
  }
}
