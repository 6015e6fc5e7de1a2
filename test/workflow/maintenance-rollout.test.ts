// A rolling NodeMaintenance (spec.rollout, docs/rolling-maintenance.md) on the real workflow code
// with scripted activities (test/support/fake-rollout.ts): which node goes when, each node's
// phases and completion, nodeTimeout and its policies, maxFailures, pause, and the stages. Named
// after the RM statements.
import { WorkflowUpdateFailedError, type WorkflowHandle } from '@temporalio/client';
import { ROLLOUT_DONE_ANNOTATION, type NodeMaintenanceRolloutInput } from '../../api/rollout.js';
import { rolloutNodeDoneUpdate, setRolloutPausedUpdate, setStageUpdate } from '../../workflows/messages.js';
import type { MaintenanceStatus } from '../../workflows/maintenance/types.js';
import { maintenanceStatusWhen, maintenanceTestIds, startMaintenance } from '../support/fake-maintenance.js';
import { FakeRolloutCluster } from '../support/fake-rollout.js';
import { FakeBudget } from '../support/fake-budget.js';
import { useWorkflowEnv } from '../support/workflow-env.js';

const env = useWorkflowEnv();

const phases = (s: MaintenanceStatus) => Object.fromEntries(s.nodeStatuses.map((n) => [n.nodeRef.name, n.phase]));
const phaseOf = (s: MaintenanceStatus, node: string) => s.nodeStatuses.find((n) => n.nodeRef.name === node)?.phase;
const statusOf = (s: MaintenanceStatus, node: string) => s.nodeStatuses.find((n) => n.nodeRef.name === node)!;
const refusal = (p: Promise<unknown>) => p.then(() => 'accepted', (e: WorkflowUpdateFailedError) => e.cause?.message);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Replays the node writes: the most nodes held at once, and the order of first cordons. */
function heldOverTime(fake: FakeRolloutCluster): { most: number; order: string[]; heldWhenCordoned: Map<string, string[]> } {
  const held = new Set<string>();
  const order: string[] = [];
  const heldWhenCordoned = new Map<string, string[]>();
  let most = 0;
  for (const w of fake.nodeWrites()) {
    const [node, holders] = w.split(': ') as [string, string];
    if (holders) {
      if (!order.includes(node)) {
        order.push(node);
        heldWhenCordoned.set(node, [...held]);
      }
      held.add(node);
    } else held.delete(node);
    most = Math.max(most, held.size);
  }
  return { most, order, heldWhenCordoned };
}

async function rolling(tq: string, name: string, rollout: NodeMaintenanceRolloutInput, stage = 'Drain'): Promise<WorkflowHandle> {
  return startMaintenance(env(), tq, name, { stage: stage as 'Drain', rollout });
}

describe('RM-1 which node goes next', () => {
  test.concurrent('RM-1.3 RM-1.4 maxUnavailable 2 over 6 nodes in 3 partitions keeps at most 2 in progress and the partition order; Drained when every node is Done (RM-6.2)', async () => {
    const fake = new FakeRolloutCluster({ 'rp-1': 'zone-b', 'rp-2': 'zone-a', 'rp-3': undefined, 'rp-4': 'zone-b', 'rp-5': 'zone-a', 'rp-6': undefined });
    const names = [...fake.nodes.keys()];
    await env().withWorker(fake.rolloutActivities(), async (tq) => {
      const h = await rolling(tq, 'rp', { maxUnavailable: 2, partitionBy: 'topology.kubernetes.io/zone', completion: { annotation: true } });
      let most = 0;
      // The admin's tooling: marks each node done once it awaits its work.
      const s = await maintenanceStatusWhen(h, 'every node Done', (x) => {
        most = Math.max(most, x.rollout?.inProgress ?? 0);
        for (const n of x.nodeStatuses) if (n.phase === 'AwaitingWork') fake.nodes.get(n.nodeRef.name)!.annotations![ROLLOUT_DONE_ANNOTATION] = 'rp';
        return x.nodeStatuses.length === 6 && x.nodeStatuses.every((n) => n.phase === 'Done');
      });
      expect(most).toBeLessThanOrEqual(2);
      expect(most).toBe(2);
      const { most: held, order, heldWhenCordoned } = heldOverTime(fake);
      expect(held).toBe(2);
      // zone-a, then zone-b, then the nodes without the label (two at a time, started together).
      expect([order.slice(0, 2).sort(), order.slice(2, 4).sort(), order.slice(4).sort()]).toEqual([['rp-2', 'rp-5'], ['rp-1', 'rp-4'], ['rp-3', 'rp-6']]);
      // A partition starts only once the ones before are released.
      const earlier = (nodes: string[], before: string[]) => nodes.flatMap((n) => heldWhenCordoned.get(n)!.filter((h) => before.includes(h)));
      expect(earlier(['rp-1', 'rp-4'], ['rp-2', 'rp-5'])).toEqual([]);
      expect(earlier(['rp-3', 'rp-6'], ['rp-1', 'rp-2', 'rp-4', 'rp-5'])).toEqual([]);
      expect(s.rollout).toMatchObject({ phase: 'Done', maxUnavailable: 2, partitions: ['zone-a', 'zone-b', ''], waiting: 0, inProgress: 0, done: 6, failed: 0 });
      expect(s.conditions.find((c) => c.type === 'Drained')).toMatchObject({ status: 'True' });
      expect(statusOf(s, 'rp-2').phaseTimes!.map((t) => t.phase)).toEqual(['Cordoned', 'Draining', 'AwaitingWork', 'Verifying', 'Done']);
      for (const n of names) expect(fake.nodes.get(n)).toMatchObject({ cordoned: false, heldBy: [] });
      await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
      await h.result();
    }, { workflowIds: maintenanceTestIds(['rp'], names) });
  }, 120_000);
});

describe('RM-1.6 budgets on top', () => {
  test.concurrent('RM-1.6 a NodeDisruptionBudget of 1 under maxUnavailable 3: the budget wins (one node cordoned at a time); the refused ones are Waiting with the refusal', async () => {
    const fake = new FakeRolloutCluster({ 'rd-1': undefined, 'rd-2': undefined, 'rd-3': undefined });
    fake.budget = new FakeBudget(1, 'rd');
    const names = [...fake.nodes.keys()];
    await env().withWorker(fake.rolloutActivities(), async (tq) => {
      const h = await rolling(tq, 'rd', { maxUnavailable: 3, completion: { manual: true } });
      const s = await maintenanceStatusWhen(h, 'one AwaitingWork, two refused', (x) => x.nodeStatuses.filter((n) => n.phase === 'AwaitingWork').length === 1 && x.nodeStatuses.filter((n) => n.waitingFor?.startsWith('waiting for NodeDisruptionBudget rd')).length === 2);
      expect(s.rollout).toMatchObject({ inProgress: 3, waiting: 0 });
      let finished = 0;
      await maintenanceStatusWhen(h, 'every node Done', (x) => {
        for (const n of x.nodeStatuses) if (n.phase === 'AwaitingWork') void h.executeUpdate(rolloutNodeDoneUpdate, { args: [{ node: n.nodeRef.name }] }).catch(() => undefined);
        finished = x.nodeStatuses.filter((n) => n.phase === 'Done').length;
        return finished === 3;
      });
      expect(heldOverTime(fake).most).toBe(1);
      expect(fake.budget.most).toBe(1);
      await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
      await h.result();
      expect(fake.budget.disrupted.size).toBe(0);
    }, { workflowIds: maintenanceTestIds(['rd'], names) });
  }, 120_000);
});

describe('RM-3 completion', () => {
  test.concurrent('RM-3.6 a node that fails its health checks after its work is Failed, released, and counted against maxFailures', async () => {
    const fake = new FakeRolloutCluster({ 'rh-1': undefined, 'rh-2': undefined });
    fake.healthy = () => false;
    await env().withWorker(fake.rolloutActivities(), async (tq) => {
      const h = await rolling(tq, 'rh', { completion: { manual: true, healthChecks: [{ endpoint: 'http://check', waitPeriod: '1m' }] } });
      await maintenanceStatusWhen(h, 'rh-1 AwaitingWork', (x) => phaseOf(x, 'rh-1') === 'AwaitingWork');
      await h.executeUpdate(rolloutNodeDoneUpdate, { args: [{ node: 'rh-1' }] });
      const s = await maintenanceStatusWhen(h, 'rh-1 Failed', (x) => phaseOf(x, 'rh-1') === 'Failed');
      expect(statusOf(s, 'rh-1').message).toBe('health checks failed: rh-1: GET http://check: status 500');
      expect(fake.nodes.get('rh-1')).toMatchObject({ cordoned: false, heldBy: [] });
      await maintenanceStatusWhen(h, 'stopped', (x) => x.rollout?.phase === 'Stopped');
      expect(fake.nodeWrites().filter((w) => w.startsWith('rh-2'))).toEqual([]);
      await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
      await h.result();
    }, { workflowIds: maintenanceTestIds(['rh'], ['rh-1', 'rh-2']) });
  }, 90_000);

  test.concurrent('RM-3.1 RM-3.2 completion by reboot: the bootID recorded when drained; a new bootID counts only once the node is Ready; then released and Done', async () => {
    const fake = new FakeRolloutCluster({ 'rb-1': undefined });
    await env().withWorker(fake.rolloutActivities(), async (tq) => {
      const h = await rolling(tq, 'rb', { completion: { reboot: true, healthChecks: [{ endpoint: 'http://{{ .NodeIP }}:8080/healthz', waitPeriod: '1m' }] } });
      const s = await maintenanceStatusWhen(h, 'AwaitingWork', (x) => phaseOf(x, 'rb-1') === 'AwaitingWork');
      expect(statusOf(s, 'rb-1').bootID).toBe('boot-rb-1-1');
      expect(fake.nodes.get('rb-1')).toMatchObject({ cordoned: true, heldBy: ['rb'] });
      // Rebooted, not Ready yet: still awaiting its work.
      const n = fake.nodes.get('rb-1')!;
      n.ready = false;
      n.bootID = 'boot-rb-1-2';
      await sleep(1_500);
      expect(phaseOf(await h.query('maintenanceStatus' as never) as MaintenanceStatus, 'rb-1')).toBe('AwaitingWork');
      n.ready = true;
      const done = await maintenanceStatusWhen(h, 'Done', (x) => phaseOf(x, 'rb-1') === 'Done');
      expect(statusOf(done, 'rb-1').phaseTimes!.map((t) => t.phase)).toEqual(['Cordoned', 'Draining', 'AwaitingWork', 'Verifying', 'Done']);
      expect(statusOf(done, 'rb-1').bootID).toBe('boot-rb-1-1'); // the record of what it was drained at
      expect(fake.nodes.get('rb-1')).toMatchObject({ cordoned: false, heldBy: [] });
      // Health checks ran after the release, on the node's IP.
      const check = fake.callsOf('healthCheckNodes')[0]!;
      expect(check.input).toMatchObject({ nodes: [{ name: 'rb-1', internalIP: '10.0.0.1' }] });
      const release = fake.callsOf('writeMaintenanceNodeState').find((c) => (c.input as { holders: string[] }).holders.length === 0)!;
      expect(check.startedAt).toBeGreaterThanOrEqual(release.endedAt!);
      await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
      await h.result();
    }, { workflowIds: maintenanceTestIds(['rb'], ['rb-1']) });
  }, 90_000);

  test.concurrent('RM-3.3 completion by the annotation naming this maintenance (another maintenance\'s name does not count)', async () => {
    const fake = new FakeRolloutCluster({ 'ra-1': undefined });
    await env().withWorker(fake.rolloutActivities(), async (tq) => {
      const h = await rolling(tq, 'ra', { completion: { annotation: true } });
      await maintenanceStatusWhen(h, 'AwaitingWork', (x) => phaseOf(x, 'ra-1') === 'AwaitingWork');
      fake.nodes.get('ra-1')!.annotations![ROLLOUT_DONE_ANNOTATION] = 'someone-else';
      await sleep(1_500);
      expect(phaseOf(await h.query('maintenanceStatus' as never) as MaintenanceStatus, 'ra-1')).toBe('AwaitingWork');
      fake.nodes.get('ra-1')!.annotations![ROLLOUT_DONE_ANNOTATION] = 'ra';
      await maintenanceStatusWhen(h, 'Done', (x) => phaseOf(x, 'ra-1') === 'Done');
      expect(fake.nodes.get('ra-1')).toMatchObject({ cordoned: false, heldBy: [] });
      await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
      await h.result();
    }, { workflowIds: maintenanceTestIds(['ra'], ['ra-1']) });
  }, 90_000);

  test.concurrent('RM-3.4 completion by the rolloutNodeDone update; refused in one line for a node not in the maintenance, not AwaitingWork, or without spec.rollout', async () => {
    const fake = new FakeRolloutCluster({ 'ru-1': undefined, 'ru-2': undefined });
    await env().withWorker(fake.rolloutActivities(), async (tq) => {
      const h = await rolling(tq, 'ru', { completion: { reboot: true } }); // the operator's word counts whatever the methods
      await maintenanceStatusWhen(h, 'ru-1 AwaitingWork', (x) => phaseOf(x, 'ru-1') === 'AwaitingWork');
      expect(await refusal(h.executeUpdate(rolloutNodeDoneUpdate, { args: [{ node: 'nope' }] }))).toBe('node nope is not in this maintenance');
      expect(await refusal(h.executeUpdate(rolloutNodeDoneUpdate, { args: [{ node: 'ru-2' }] }))).toBe('node ru-2 is Waiting, not AwaitingWork');
      expect(await h.executeUpdate(rolloutNodeDoneUpdate, { args: [{ node: 'ru-1', requestedBy: 'alice' }] })).toEqual({ node: 'ru-1', phase: 'Verifying' });
      const after = await maintenanceStatusWhen(h, 'ru-1 Done, ru-2 AwaitingWork', (x) => phaseOf(x, 'ru-1') === 'Done' && phaseOf(x, 'ru-2') === 'AwaitingWork');
      expect(statusOf(after, 'ru-1').message).toBe('work done (manual, by alice)');
      expect(await refusal(h.executeUpdate(rolloutNodeDoneUpdate, { args: [{ node: 'ru-1' }] }))).toBe('node ru-1 is Done, not AwaitingWork');
      await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
      await h.result();
      const plain = await startMaintenance(env(), tq, 'ru-plain');
      expect(await refusal(plain.executeUpdate(rolloutNodeDoneUpdate, { args: [{ node: 'ru-1' }] }))).toBe('this maintenance has no spec.rollout');
      expect(await refusal(plain.executeUpdate(setRolloutPausedUpdate, { args: [{ paused: true }] }))).toBe('this maintenance has no spec.rollout');
      await plain.terminate();
    }, { workflowIds: maintenanceTestIds(['ru', 'ru-plain'], ['ru-1', 'ru-2']) });
  }, 90_000);
});

describe('RM-4 timeouts and failures', () => {
  test.concurrent('RM-4.1 RM-4.2 nodeTimeout with KeepCordoned: the node is Failed and stays held until Complete; the next node goes on (maxFailures 1)', async () => {
    const fake = new FakeRolloutCluster({ 'rk-1': undefined, 'rk-2': undefined });
    await env().withWorker(fake.rolloutActivities(), async (tq) => {
      const h = await rolling(tq, 'rk', { completion: { manual: true }, nodeTimeout: '3s', maxFailures: 1 });
      const s = await maintenanceStatusWhen(h, 'rk-1 Failed', (x) => phaseOf(x, 'rk-1') === 'Failed');
      expect(statusOf(s, 'rk-1').message).toBe('no completion within 3s');
      expect(fake.nodes.get('rk-1')).toMatchObject({ cordoned: true, heldBy: ['rk'] });
      await maintenanceStatusWhen(h, 'rk-2 AwaitingWork', (x) => phaseOf(x, 'rk-2') === 'AwaitingWork');
      await h.executeUpdate(rolloutNodeDoneUpdate, { args: [{ node: 'rk-2' }] });
      const done = await maintenanceStatusWhen(h, 'rk-2 Done', (x) => phaseOf(x, 'rk-2') === 'Done');
      expect(done.rollout).toMatchObject({ phase: 'Done', done: 1, failed: 1 });
      expect(done.conditions.find((c) => c.type === 'Drained')).toMatchObject({ status: 'False' }); // RM-6.2: a Failed node keeps it False
      expect(fake.nodes.get('rk-1')).toMatchObject({ cordoned: true, heldBy: ['rk'] });
      await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
      await h.result();
      expect(fake.nodes.get('rk-1')).toMatchObject({ cordoned: false, heldBy: [] });
    }, { workflowIds: maintenanceTestIds(['rk'], ['rk-1', 'rk-2']) });
  }, 90_000);

  test.concurrent('RM-4.2 nodeTimeout with Uncordon: the node is Failed and released at once', async () => {
    const fake = new FakeRolloutCluster({ 'rn-1': undefined });
    await env().withWorker(fake.rolloutActivities(), async (tq) => {
      const h = await rolling(tq, 'rn', { completion: { manual: true }, nodeTimeout: '3s', nodeTimeoutPolicy: 'Uncordon' });
      await maintenanceStatusWhen(h, 'rn-1 Failed', (x) => phaseOf(x, 'rn-1') === 'Failed');
      await maintenanceStatusWhen(h, 'released', () => !fake.nodes.get('rn-1')!.cordoned);
      expect(fake.nodes.get('rn-1')).toMatchObject({ cordoned: false, heldBy: [] });
      await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
      await h.result();
    }, { workflowIds: maintenanceTestIds(['rn'], ['rn-1']) });
  }, 90_000);

  test.concurrent('RM-4.4 maxFailures 0: one Failed node stops the rollout; no new node, RolloutStopped True', async () => {
    const fake = new FakeRolloutCluster({ 'rs-1': undefined, 'rs-2': undefined, 'rs-3': undefined });
    await env().withWorker(fake.rolloutActivities(), async (tq) => {
      const h = await rolling(tq, 'rs', { completion: { manual: true }, nodeTimeout: '3s' });
      const s = await maintenanceStatusWhen(h, 'stopped', (x) => x.rollout?.phase === 'Stopped');
      expect(s.conditions.find((c) => c.type === 'RolloutStopped')).toMatchObject({ status: 'True', reason: 'MaxFailures', message: '1 node failed (maxFailures 0): rs-1' });
      expect(statusOf(s, 'rs-2')).toMatchObject({ phase: 'Waiting', waitingFor: 'rollout stopped' });
      await sleep(1_500);
      expect(fake.nodeWrites().filter((w) => !w.startsWith('rs-1'))).toEqual([]);
      await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
      await h.result();
    }, { workflowIds: maintenanceTestIds(['rs'], ['rs-1', 'rs-2', 'rs-3']) });
  }, 90_000);
});

describe('RM-5 pause and RM-6 stages', () => {
  test.concurrent('RM-5.1 a paused rollout takes no new node (in-progress nodes go on) and says so; resumed, it goes on; refused once Complete (RM-5.2)', async () => {
    const fake = new FakeRolloutCluster({ 'rz-1': undefined, 'rz-2': undefined });
    await env().withWorker(fake.rolloutActivities(), async (tq) => {
      const h = await rolling(tq, 'rz', { completion: { manual: true } });
      await maintenanceStatusWhen(h, 'rz-1 AwaitingWork', (x) => phaseOf(x, 'rz-1') === 'AwaitingWork');
      expect(await h.executeUpdate(setRolloutPausedUpdate, { args: [{ paused: true, requestedBy: 'alice' }] })).toEqual({ phase: 'Paused' });
      await h.executeUpdate(rolloutNodeDoneUpdate, { args: [{ node: 'rz-1' }] });
      const s = await maintenanceStatusWhen(h, 'rz-1 Done', (x) => phaseOf(x, 'rz-1') === 'Done');
      await sleep(1_500);
      const still = (await h.query('maintenanceStatus' as never)) as MaintenanceStatus;
      expect(statusOf(still, 'rz-2')).toMatchObject({ phase: 'Waiting', waitingFor: 'paused' });
      expect(still.rollout?.phase).toBe('Paused');
      expect(s.message).toContain('Paused');
      expect(still.rollout?.message).toMatch(/; paused by alice$/);
      expect(fake.nodeWrites().filter((w) => w.startsWith('rz-2'))).toEqual([]);
      expect(await h.executeUpdate(setRolloutPausedUpdate, { args: [{ paused: false }] })).toEqual({ phase: 'Running' });
      await maintenanceStatusWhen(h, 'rz-2 AwaitingWork', (x) => phaseOf(x, 'rz-2') === 'AwaitingWork');
      await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
      await h.result();
      await expect(h.executeUpdate(setRolloutPausedUpdate, { args: [{ paused: true }] })).rejects.toThrow();
    }, { workflowIds: maintenanceTestIds(['rz'], ['rz-1', 'rz-2']) });
  }, 90_000);

  test.concurrent('RM-6.1 RM-6.3 Cordon with a rollout holds nothing; in Drain two nodes are held; Complete releases the held ones and never touches the Waiting ones', async () => {
    const fake = new FakeRolloutCluster({ 'rc-1': undefined, 'rc-2': undefined, 'rc-3': undefined, 'rc-4': undefined });
    await env().withWorker(fake.rolloutActivities(), async (tq) => {
      const h = await rolling(tq, 'rc', { maxUnavailable: 2, completion: { manual: true } }, 'Cordon');
      const c = await maintenanceStatusWhen(h, 'Cordon', (x) => x.stage === 'Cordon' && x.nodeStatuses.length === 4);
      expect(c.message).toBe('Cordon: nothing held; the rollout cordons node by node in Drain (4 nodes selected)');
      await sleep(1_000);
      expect(fake.nodeWrites()).toEqual([]);
      await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Drain' }] });
      const s = await maintenanceStatusWhen(h, 'two AwaitingWork', (x) => x.nodeStatuses.filter((n) => n.phase === 'AwaitingWork').length === 2);
      expect(phases(s)).toEqual({ 'rc-1': 'AwaitingWork', 'rc-2': 'AwaitingWork', 'rc-3': 'Waiting', 'rc-4': 'Waiting' });
      expect(statusOf(s, 'rc-3').waitingFor).toBe('maxUnavailable (2 of 2 in progress)');
      await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
      await h.result();
      for (const n of ['rc-1', 'rc-2']) expect(fake.nodes.get(n)).toMatchObject({ cordoned: false, heldBy: [] });
      expect(fake.nodeWrites().filter((w) => w.startsWith('rc-3') || w.startsWith('rc-4'))).toEqual([]);
    }, { workflowIds: maintenanceTestIds(['rc'], ['rc-1', 'rc-2', 'rc-3', 'rc-4']) });
  }, 90_000);
});
