// A rolling NodeMaintenance's edges (docs/rolling-maintenance.md) on the real workflow code with
// scripted activities (test/support/fake-rollout.ts): a Waiting node another maintenance or a cycle
// holds (RM-1.5), a node re-created under its name while it awaits its reboot (RM-3.2). Named after
// the RM statements.
import type { WorkflowHandle } from '@temporalio/client';
import type { NodeMaintenanceRolloutInput } from '../../api/rollout.js';
import { rolloutNodeDoneUpdate, setStageUpdate } from '../../workflows/messages.js';
import type { MaintenanceStatus } from '../../workflows/maintenance/types.js';
import { maintenanceStatusWhen, maintenanceTestIds, startMaintenance } from '../support/fake-maintenance.js';
import { FakeRolloutCluster } from '../support/fake-rollout.js';
import { useWorkflowEnv } from '../support/workflow-env.js';

const env = useWorkflowEnv();

const phaseOf = (s: MaintenanceStatus, node: string) => s.nodeStatuses.find((n) => n.nodeRef.name === node)?.phase;
const statusOf = (s: MaintenanceStatus, node: string) => s.nodeStatuses.find((n) => n.nodeRef.name === node)!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function rolling(tq: string, name: string, rollout: NodeMaintenanceRolloutInput): Promise<WorkflowHandle> {
  return startMaintenance(env(), tq, name, { stage: 'Drain', rollout });
}

/** Marks AwaitingWork nodes done by the operator's word as they come. */
const doneWhenAwaiting = (h: WorkflowHandle, s: MaintenanceStatus) => {
  for (const n of s.nodeStatuses) if (n.phase === 'AwaitingWork') void h.executeUpdate(rolloutNodeDoneUpdate, { args: [{ node: n.nodeRef.name }] }).catch(() => undefined);
};

describe('RM-1.5 a Waiting node held elsewhere', () => {
  test.concurrent('RM-1.5 a node another maintenance holds and one a cycle claimed are waited for, named in waitingFor, each counted once against maxUnavailable; started once let go', async () => {
    const fake = new FakeRolloutCluster({ 'rx-1': undefined, 'rx-2': undefined, 'rx-3': undefined });
    // rx-1 held (cordoned) by another maintenance, rx-2 claimed by a CycleNodeRequest.
    Object.assign(fake.nodes.get('rx-1')!, { cordoned: true, heldBy: ['other'] });
    fake.nodes.get('rx-2')!.claimedBy = 'default/cyc';
    const names = [...fake.nodes.keys()];
    await env().withWorker(fake.rolloutActivities(), async (tq) => {
      const h = await rolling(tq, 'rx', { maxUnavailable: 2, completion: { manual: true } });
      // Two of two unavailable already: nothing starts, and each says why.
      const s = await maintenanceStatusWhen(h, 'all three Waiting with reasons', (x) => x.nodeStatuses.length === 3 && !!statusOf(x, 'rx-3').waitingFor);
      expect(statusOf(s, 'rx-1')).toMatchObject({ phase: 'Waiting', waitingFor: 'held by NodeMaintenance other' });
      expect(statusOf(s, 'rx-2')).toMatchObject({ phase: 'Waiting', waitingFor: 'held by CycleNodeRequest default/cyc' });
      expect(statusOf(s, 'rx-3')).toMatchObject({ phase: 'Waiting', waitingFor: 'maxUnavailable (2 of 2 in progress, 2 held elsewhere)' });
      await sleep(1_000);
      expect(fake.nodeWrites()).toEqual([]);
      // The other maintenance lets rx-1 go: it is ours to start (one slot: rx-3 still waits).
      Object.assign(fake.nodes.get('rx-1')!, { cordoned: false, heldBy: [] });
      const one = await maintenanceStatusWhen(h, 'rx-1 AwaitingWork', (x) => phaseOf(x, 'rx-1') === 'AwaitingWork');
      expect(statusOf(one, 'rx-3').waitingFor).toBe('maxUnavailable (2 of 2 in progress, 1 held elsewhere)');
      expect(fake.nodeWrites().filter((w) => !w.startsWith('rx-1'))).toEqual([]);
      await h.executeUpdate(rolloutNodeDoneUpdate, { args: [{ node: 'rx-1' }] });
      await maintenanceStatusWhen(h, 'rx-3 AwaitingWork', (x) => phaseOf(x, 'rx-3') === 'AwaitingWork');
      expect(fake.nodeWrites().filter((w) => w.startsWith('rx-2'))).toEqual([]);
      // The cycle's claim goes: rx-2 is taken too, and every node finishes.
      fake.nodes.get('rx-2')!.claimedBy = undefined;
      const done = await maintenanceStatusWhen(h, 'every node Done', (x) => {
        doneWhenAwaiting(h, x);
        return x.nodeStatuses.every((n) => n.phase === 'Done');
      });
      expect(done.rollout).toMatchObject({ phase: 'Done', done: 3, failed: 0 });
      await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
      await h.result();
    }, { workflowIds: maintenanceTestIds(['rx'], names) });
  }, 120_000);
});

describe('RM-3.2 a node re-created under its name', () => {
  test.concurrent('RM-3.2 a Node deleted and re-created under the same name (a new uid, a new bootID) while AwaitingWork is not a reboot: the node drained is Done as replaced', async () => {
    const fake = new FakeRolloutCluster({ 'rr-1': undefined });
    await env().withWorker(fake.rolloutActivities(), async (tq) => {
      const h = await rolling(tq, 'rr', { completion: { reboot: true } });
      await maintenanceStatusWhen(h, 'AwaitingWork', (x) => phaseOf(x, 'rr-1') === 'AwaitingWork');
      // A new Node object under the name: its own uid and bootID, Ready.
      Object.assign(fake.nodes.get('rr-1')!, { uid: 'uid-rr-1-again', bootID: 'boot-rr-1-new', ready: true });
      const s = await maintenanceStatusWhen(h, 'Done', (x) => phaseOf(x, 'rr-1') === 'Done');
      expect(statusOf(s, 'rr-1').message).toBe('node replaced (a new Node under its name)');
      expect(statusOf(s, 'rr-1').phaseTimes!.map((t) => t.phase)).toEqual(['Cordoned', 'Draining', 'AwaitingWork', 'Done']);
      expect(fake.callsOf('watchRolloutNode')[0]!.input).toMatchObject({ uid: 'uid-rr-1', bootID: 'boot-rr-1-1' });
      await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
      await h.result();
    }, { workflowIds: maintenanceTestIds(['rr'], ['rr-1']) });
  }, 90_000);
});
