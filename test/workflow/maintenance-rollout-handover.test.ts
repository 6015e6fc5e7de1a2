// Issue 27 "Performance" (the bench's completion → next cordon): the rollout's pass waits on no
// node's I/O before it registers the next node. A node's bootID read (RM-3.1) runs in the background,
// and each node's steps run side by side with the planner, so one node's slow read holds back neither
// another node's completion nor the start of the next one.
import { Context } from '@temporalio/activity';
import { rolloutNodeDoneUpdate, setStageUpdate } from '../../workflows/messages.js';
import type { MaintenanceStatus } from '../../workflows/maintenance/types.js';
import { maintenanceStatusWhen, maintenanceTestIds, startMaintenance } from '../support/fake-maintenance.js';
import { FakeRolloutCluster } from '../support/fake-rollout.js';
import { nodeFacts } from '../../activities/maintenance/rollout.js';
import { useWorkflowEnv } from '../support/workflow-env.js';

const env = useWorkflowEnv();
const phaseOf = (s: MaintenanceStatus, node: string) => s.nodeStatuses.find((n) => n.nodeRef.name === node)?.phase;

describe('#27 performance: the hand-over from one node to the next waits on no other node', () => {
  test('RM-3.1 #27 a slow bootID read of one node holds back neither another node\'s completion nor the next node\'s start', async () => {
    const fake = new FakeRolloutCluster({ 'rs-1': undefined, 'rs-2': undefined, 'rs-3': undefined });
    const names = [...fake.nodes.keys()];
    let slowAsked = false;
    let slowGoes = false;
    const acts = {
      ...fake.rolloutActivities(),
      // rs-2's read answers only when the test lets it (well within the step's 30 s).
      readRolloutNode: async (i: { node: string }) => {
        if (i.node === 'rs-2') {
          slowAsked = true;
          for (const end = Date.now() + 20_000; !slowGoes && Date.now() < end; ) {
            Context.current().heartbeat();
            await Context.current().sleep(50);
          }
        }
        return nodeFacts(fake.v1(i.node));
      },
    };
    await env().withWorker(acts, async (tq) => {
      const h = await startMaintenance(env(), tq, 'rs', { stage: 'Drain', rollout: { maxUnavailable: 2, completion: { manual: true } } });
      await maintenanceStatusWhen(h, 'rs-1 AwaitingWork while rs-2\'s read hangs', (x) => slowAsked && phaseOf(x, 'rs-1') === 'AwaitingWork');
      await h.executeUpdate(rolloutNodeDoneUpdate, { args: [{ node: 'rs-1' }] });
      const s = await maintenanceStatusWhen(h, 'rs-1 Done and rs-3 started', (x) => phaseOf(x, 'rs-1') === 'Done' && phaseOf(x, 'rs-3') !== 'Waiting');
      // All of it while rs-2's read still hangs: rs-2 is Draining, its bootID not recorded yet.
      expect(slowGoes).toBe(false);
      expect(phaseOf(s, 'rs-2')).toBe('Draining');
      expect(fake.nodes.get('rs-1')).toMatchObject({ cordoned: false });
      expect(fake.nodes.get('rs-3')).toMatchObject({ cordoned: true });
      slowGoes = true;
      const after = await maintenanceStatusWhen(h, 'rs-2 AwaitingWork, its bootID recorded', (x) => phaseOf(x, 'rs-2') === 'AwaitingWork');
      expect(after.nodeStatuses.find((n) => n.nodeRef.name === 'rs-2')!.bootID).toBe('boot-rs-2-1');
      await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
      await h.result();
    }, { workflowIds: maintenanceTestIds(['rs'], names) });
  }, 90_000);
});
