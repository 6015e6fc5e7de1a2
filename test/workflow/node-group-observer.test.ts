// The drift observer workflow with a scripted pass: it looks at once, sleeps its interval durably,
// looks again early when woken by observeNow, continues as new before its history grows, and ends
// when its object is gone.
import type { ObserveInput, ObserveResult } from '../../activities/node-group/observe.js';
import { nodeGroupObserverWorkflow } from '../../workflows/index.js';
import { nodeGroupObserverWorkflowId } from '../../workflows/ids.js';
import { observeNowSignal } from '../../workflows/messages.js';
import { waitFor } from '../support/wait.js';
import { useWorkflowEnv } from '../support/workflow-env.js';

const env = useWorkflowEnv({ dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 30 } });

test('passes at its interval and when woken; continues as new; ends once its object is gone', async () => {
  const input: ObserveInput = { name: 'workers', uid: 'uid-obs' };
  const id = nodeGroupObserverWorkflowId(input);
  const passes: number[] = [];
  let gone = false;
  const activities = {
    async observeNodeGroup(i: ObserveInput): Promise<ObserveResult> {
      expect(i).toEqual(input);
      passes.push(Date.now());
      return gone ? { gone: true } : { gone: false, intervalMs: 60 * 60_000, message: `pass ${passes.length}`, drifted: 0 };
    },
  };
  await env().withWorker(activities, async (taskQueue) => {
    const h = await env().client.workflow.start(nodeGroupObserverWorkflow, { taskQueue, workflowId: id, args: [input], workflowExecutionTimeout: '3 minutes' });
    await waitFor('the first pass', async () => passes.length >= 1 || undefined);
    // The interval is an hour: only the signal brings the next passes.
    await new Promise((r) => setTimeout(r, 1000));
    expect(passes).toHaveLength(1);
    for (let i = 2; i <= 12; i++) {
      await h.signal(observeNowSignal);
      await waitFor(`pass ${i}`, async () => passes.length >= i || undefined);
    }
    // 12 passes are more than 30 events: at least one continue-as-new, and the chain still answers.
    const runs = [];
    for await (const w of env().client.workflow.list({ query: `WorkflowId = '${id}'` })) runs.push(w.runId);
    expect(runs.length).toBeGreaterThanOrEqual(2);
    gone = true;
    await env().client.workflow.getHandle(id).signal(observeNowSignal);
    await env().client.workflow.getHandle(id).result();
    expect(passes.length).toBe(13);
  }, { workflowIds: [id] });
}, 120_000);
