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
import { FakeBudget } from '../support/fake-budget.js';
import { maintenanceNodeWorkflowId } from '../../workflows/ids.js';
import { normalize, type Ev, type HistoryEvent } from '../../bench/history-chain.js';

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

/** A coordinator's history (it has ended: the node was released). */
const historyOf = async (id: string): Promise<Ev[]> => normalize(((await env().client.workflow.getHandle(id).fetchHistory()).events ?? []) as unknown as HistoryEvent[]);
const decode = (input: any): any => JSON.parse(Buffer.from(input?.payloads?.[0]?.data ?? []).toString('utf8'));
const activities = (evs: Ev[]) => evs.filter((e) => e.kind === 'activityTaskScheduled');
const num = (x: unknown) => Number(String(x));

describe('#27 hand-over: the coordinator\'s budget slot goes with its node writes', () => {
  test('#27 hand-over the slot ask is the cordon\'s activity (in the first task), the slot goes back in the uncordon\'s, and a finished drain\'s cancel goes beside it', async () => {
    const fake = new FakeRolloutCluster({ 'rh-1': undefined, 'rh-2': undefined });
    fake.budget = new FakeBudget(1, 'rh');
    const names = [...fake.nodes.keys()];
    await env().withWorker(fake.rolloutActivities(), async (tq) => {
      const h = await startMaintenance(env(), tq, 'rh', { stage: 'Drain', rollout: { maxUnavailable: 1, completion: { manual: true } } });
      for (const node of names) {
        await maintenanceStatusWhen(h, `${node} AwaitingWork`, (x) => phaseOf(x, node) === 'AwaitingWork');
        await h.executeUpdate(rolloutNodeDoneUpdate, { args: [{ node }] });
      }
      await maintenanceStatusWhen(h, 'both Done', (x) => names.every((n) => phaseOf(x, n) === 'Done'));
      await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
      await h.result();
    }, { workflowIds: maintenanceTestIds(['rh'], names) });
    // Budget safety: one slot, one node disrupted at a time, each slot taken before its cordon and given back after its uncordon.
    expect(fake.budget.most).toBe(1);
    expect(fake.budget.disrupted.size).toBe(0);
    const budgetCalls = fake.budget.calls.filter((c) => c.name !== 'maintenanceBudgetFit');
    for (const node of names) {
      const coordinator = maintenanceNodeWorkflowId(node);
      const onNode = (c: { input: unknown }) => (c.input as { node?: string; nodes?: string[] }).node === node || (c.input as { nodes?: string[] }).nodes?.[0] === node;
      const writes = fake.callsOf('writeMaintenanceNodeState').filter(onNode);
      const hold = writes.find((c) => (c.input as { holders: string[] }).holders.length)!;
      const release = writes.find((c) => !(c.input as { holders: string[] }).holders.length)!;
      const ask = budgetCalls.find((c) => c.name === 'acquireDisruption' && onNode(c))!;
      const giveBack = budgetCalls.find((c) => c.name === 'releaseDisruption' && onNode(c))!;
      expect(ask.endedAt!).toBeLessThanOrEqual(hold.startedAt);
      expect(release.endedAt!).toBeLessThanOrEqual(giveBack.startedAt);
      expect(fake.slotWrites.filter((w) => w.node === node)).toContainEqual({ node, release: false, holder: coordinator });
      expect(fake.slotWrites.filter((w) => w.node === node)).toContainEqual({ node, release: true, holder: coordinator });

      const evs = await historyOf(coordinator);
      // No budget activity of its own: the slot rides on the node writes.
      expect(activities(evs).map((e) => e.a.activityType?.name)).not.toContain('acquireDisruption');
      expect(activities(evs).map((e) => e.a.activityType?.name)).not.toContain('releaseDisruption');
      // The cordon (with the slot's ask) is what its first workflow task schedules.
      const firstTask = evs.find((e) => e.kind === 'workflowTaskCompleted')!;
      const first = activities(evs)[0]!;
      expect(first.a.activityType?.name).toBe('writeMaintenanceNodeState');
      expect(decode(first.a.input)).toMatchObject({ node, holders: ['rh'], slot: { holder: coordinator } });
      expect(num(first.a.workflowTaskCompletedEventId)).toBe(firstTask.id);
      // From the release to its acknowledgement: one activity, the restoring write (with the slot),
      // scheduled in the same task as the cancel of the drain (drained at its final targets: ended).
      const releasedAt = evs.find((e) => e.kind === 'workflowExecutionSignaled' && e.a.signalName === 'release')!.id;
      const ackAt = evs.find((e) => e.kind === 'signalExternalWorkflowExecutionInitiated' && e.a.signalName === 'nodeReport' && decode(e.a.input)?.released)!.id;
      const between = activities(evs).filter((e) => e.id > releasedAt && e.id < ackAt);
      expect(between.map((e) => e.a.activityType?.name)).toEqual(['writeMaintenanceNodeState']);
      expect(decode(between[0]!.a.input)).toEqual({ node, holders: [], slot: { holder: coordinator } });
      const cancel = evs.find((e) => e.kind === 'requestCancelExternalWorkflowExecutionInitiated' && e.id > releasedAt);
      expect(num(cancel?.a.workflowTaskCompletedEventId)).toBe(num(between[0]!.a.workflowTaskCompletedEventId));
    }
  }, 90_000);
});
