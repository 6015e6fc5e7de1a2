// Issue 15 in the NodeMaintenance coordinators and CLI drains, with scripted activities and an
// in-memory NodeDisruptionBudget (test/support/fake-budget.ts): a coordinator (nm-node/<node>) and a
// CLI drain (drain/<node>) take a slot before their first cordon, write nothing while refused and
// say why (the maintenance's nodeStatuses and drainStatus, the drain's message), proceed once a slot
// frees, and give it back after the restoring write (the coordinator) or when the drain ends.
import { WorkflowFailedError } from '@temporalio/client';
import type { Call } from '../support/scripted.js';
import { maintenanceDrainWorkflowId } from '../../workflows/ids.js';
import { setStageUpdate } from '../../workflows/messages.js';
import type { HoldInput } from '../../activities/maintenance/node-state.js';
import { FakeBudget } from '../support/fake-budget.js';
import { FakeDrain, fakeWhen, pod, runDrain, statusWhen } from '../support/fake-drain.js';
import { FakeCluster, maintenanceStatusWhen, maintenanceTestIds, startMaintenance } from '../support/fake-maintenance.js';
import { useWorkflowEnv } from '../support/workflow-env.js';

const env = useWorkflowEnv();

const nodesOf = (c: Call) => (c.input as { nodes: string[] }).nodes;
/** The call that granted the node its slot: an ask, or a wait for one (the coordinator's or a CLI drain's). */
const granted = (b: FakeBudget, node: string) =>
  b.calls.find((c) => ['acquireDisruption', 'waitForDisruption'].includes(c.name) && (c.output as { granted?: string[] } | undefined)?.granted?.includes(node));

/** The first node write that holds `node` (its cordon), and the write that released it. */
function writesOf(fake: FakeCluster, node: string) {
  const w = fake.callsOf('writeMaintenanceNodeState').filter((c) => (c.input as HoldInput).node === node);
  return { cordon: w.find((c) => (c.input as HoldInput).holders.length), release: [...w].reverse().find((c) => !(c.input as HoldInput).holders.length) };
}

describe('NodeMaintenance coordinators under a NodeDisruptionBudget', () => {
  test.concurrent('Cordon: refused coordinators write nothing and the status says why; they cordon as slots free, and give them back at Complete', async () => {
    const nodes = ['nbm-1', 'nbm-2'];
    const fake = new FakeCluster(nodes);
    fake.budget = new FakeBudget(1, 'nbm');
    fake.budget.disrupted.set('elsewhere', 'cnr/other'); // the one slot is taken by someone else
    const reason = 'waiting for NodeDisruptionBudget nbm: 1 of 1 nodes disrupted';
    await env().withWorker(fake.activities(), async (tq) => {
      const h = await startMaintenance(env(), tq, 'nbm', { stage: 'Cordon' });
      const s = await maintenanceStatusWhen(h, 'both nodes waiting', (x) => x.nodeStatuses.length === 2 && x.nodeStatuses.every((n) => n.drainMessage === reason));
      expect(s.message).toBe(`Cordon: 0 nodes cordoned; 2 nodes ${reason}`);
      // While refused each waits for a slot (asked again on a budget change, not on a timer), nothing written meanwhile.
      await fakeWhen('each waiting for a slot', () => nodes.every((n) => fake.budget.callsOf('waitForDisruption').some((c) => nodesOf(c)[0] === n)));
      expect(fake.callsOf('writeMaintenanceNodeState')).toEqual([]);
      for (const n of nodes) expect(fake.nodes.get(n)!.cordoned).toBe(false);

      fake.budget.disrupted.delete('elsewhere'); // one slot frees: exactly one node is cordoned
      const one = await maintenanceStatusWhen(h, 'one node cordoned', (x) => x.nodeStatuses.filter((n) => n.drainMessage === 'Cordoned').length === 1);
      expect(one.nodeStatuses.filter((n) => n.drainMessage === reason)).toHaveLength(1);
      expect(one.message).toBe(`Cordon: 1 node cordoned; 1 node ${reason}`);
      expect(nodes.filter((n) => fake.nodes.get(n)!.cordoned)).toHaveLength(1);

      fake.budget.limit = 2; // room for both
      await maintenanceStatusWhen(h, 'both cordoned', (x) => x.nodeStatuses.every((n) => n.drainMessage === 'Cordoned') && x.message === 'Cordon: 2 nodes cordoned');
      expect([...fake.budget.disrupted.entries()].sort()).toEqual(nodes.map((n) => [n, `nm-node/${n}`]));

      await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
      const done = await h.result();
      expect(done.completed).toBe(true);
      // Every slot back by the time the maintenance has ended (its Complete waits for the coordinators' acks).
      expect(fake.budget.disrupted.size).toBe(0);
      expect(fake.budget.most).toBe(2);
      for (const n of nodes) {
        const { cordon, release } = writesOf(fake, n);
        expect(cordon!.startedAt).toBeGreaterThanOrEqual(granted(fake.budget, n)!.endedAt!); // the slot before the cordon
        const rel = fake.budget.callsOf('releaseDisruption').find((c) => nodesOf(c)[0] === n)!;
        expect(rel.input).toEqual({ holder: `nm-node/${n}`, nodes: [n] });
        expect(rel.startedAt).toBeGreaterThanOrEqual(release!.endedAt!); // given back after the uncordon
        expect(fake.nodes.get(n)).toMatchObject({ cordoned: false, heldBy: [] });
      }
    }, { workflowIds: maintenanceTestIds(['nbm'], nodes) });
  }, 90_000);

  test.concurrent('Drain: no drain starts while refused, drainStatus names the budget; granted, the node is cordoned, drained, and released at Complete', async () => {
    const nodes = ['nbd-1'];
    const fake = new FakeCluster(nodes);
    fake.budget = new FakeBudget(1, 'nbd');
    fake.budget.disrupted.set('elsewhere', 'drain/elsewhere');
    const drain = new FakeDrain('nbd-1', [pod('web')], { cordoned: true }); // read only once the coordinator has cordoned it
    const drainActivities = drain.activities();
    const reason = 'waiting for NodeDisruptionBudget nbd: 1 of 1 nodes disrupted';
    const { acquireDisruption: _a, releaseDisruption: _r, ...drainSteps } = drainActivities;
    await env().withWorker({ ...drainSteps, ...fake.activities() }, async (tq) => {
      const h = await startMaintenance(env(), tq, 'nbd', { stage: 'Drain' });
      const s = await maintenanceStatusWhen(h, 'waiting', (x) => x.stage === 'Drain' && x.nodeStatuses[0]?.drainMessage === reason);
      expect(s.drainStatus.drainMessage).toBe(`Draining; 1 node ${reason}`);
      expect(s.message).toBe(`Drain: Draining; 1 node ${reason}`);
      await new Promise((r) => setTimeout(r, 1_000));
      const started = () => env().client.workflow.getHandle(maintenanceDrainWorkflowId('nbd-1')).describe().then(() => true, () => false);
      expect(await started()).toBe(false);
      expect(drain.calls).toEqual([]);
      expect(fake.callsOf('writeMaintenanceNodeState')).toEqual([]);

      fake.budget.disrupted.delete('elsewhere');
      const drained = await maintenanceStatusWhen(h, 'drained', (x) => x.conditions.some((c) => c.type === 'Drained' && c.status === 'True'));
      expect(drained.nodeStatuses[0]!.drainMessage).not.toContain('NodeDisruptionBudget');
      expect(drain.evictionsAsked()).toEqual(['app/web']);
      expect(fake.budget.disrupted.get('nbd-1')).toBe('nm-node/nbd-1'); // held while the maintenance holds the node
      expect(writesOf(fake, 'nbd-1').cordon!.startedAt).toBeGreaterThanOrEqual(granted(fake.budget, 'nbd-1')!.endedAt!);

      await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
      await h.result();
      expect(fake.budget.disrupted.size).toBe(0);
      expect(drain.budget.calls).toEqual([]); // the maintenance's drain takes no slot of its own
    }, { workflowIds: [...maintenanceTestIds(['nbd'], nodes), maintenanceDrainWorkflowId('nbd-1')] });
  }, 90_000);
});

describe('CLI drain under a NodeDisruptionBudget', () => {
  test.concurrent('refused: nothing cordoned, the message names the budget; granted: drained, and the slot goes back at the end', async () => {
    const fake = new FakeDrain('nbcli-1', [pod('web')]);
    fake.budget = new FakeBudget(1, 'nbcli');
    fake.budget.disrupted.set('elsewhere', 'nm-node/elsewhere');
    const reason = 'waiting for NodeDisruptionBudget nbcli: 1 of 1 nodes disrupted';
    const result = await runDrain(env(), fake, {
      during: async (h) => {
        const s = await statusWhen(h, 'waiting for the budget', (x) => x.message === reason);
        expect(s.phase).toBe('Pending');
        await fakeWhen('waiting for a slot', () => fake.budget.callsOf('waitForDisruption').length >= 1); // it asks every few seconds, in the activity
        expect(fake.callsOf('cordonNode')).toEqual([]);
        expect(fake.node.cordoned).toBe(false);
        fake.budget.disrupted.delete('elsewhere');
      },
    });
    expect(result.status.phase).toBe('Drained');
    expect(result.status.budgetWait).toBeUndefined();
    expect(fake.evictionsAsked()).toEqual(['app/web']);
    const cordon = fake.callsOf('cordonNode')[0]!;
    expect(cordon.startedAt).toBeGreaterThanOrEqual(granted(fake.budget, 'nbcli-1')!.endedAt!);
    expect(fake.budget.most).toBe(1);
    expect(fake.budget.disrupted.size).toBe(0);
    expect(fake.budget.callsOf('releaseDisruption').map((c) => c.input)).toEqual([{ holder: 'drain/nbcli-1', nodes: ['nbcli-1'] }]);
  }, 60_000);

  test.concurrent('cancelled while cordoned and blocked by a PDB: the slot still goes back', async () => {
    const fake = new FakeDrain('nbcli-2', [pod('db')]);
    fake.budget = new FakeBudget(1, 'nbcli2');
    fake.refusals.set('app/db', "Cannot evict pod as it would violate the pod's disruption budget.");
    const err = await runDrain(env(), fake, {
      during: async (h) => {
        await fakeWhen('cordoned and evicting', () => fake.node.cordoned && fake.evictionsAsked().length > 0);
        expect(fake.budget.disrupted.get('nbcli-2')).toBe('drain/nbcli-2');
        await h.cancel();
      },
    }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect(fake.budget.disrupted.size).toBe(0);
  }, 60_000);

  test.concurrent('failed (podEvictionTimeout Fail): the slot goes back', async () => {
    const fake = new FakeDrain('nbcli-3', [pod('db')]);
    fake.budget = new FakeBudget(1, 'nbcli3');
    fake.refusals.set('app/db', "Cannot evict pod as it would violate the pod's disruption budget.");
    const err = await runDrain(env(), fake, { options: { podEvictionTimeout: { after: '1s', policy: 'Fail' } } }).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowFailedError);
    expect(fake.budget.most).toBe(1);
    expect(fake.budget.disrupted.size).toBe(0);
  }, 60_000);

  test.concurrent('a cycle\'s drain (not drain/<node>) takes no slot of its own', async () => {
    const fake = new FakeDrain('nbcli-4', [pod('web')]);
    fake.budget = new FakeBudget(0, 'nbcli4'); // would refuse anything
    const result = await runDrain(env(), fake, { workflowId: 'cnr/x/cnr/uid-x/node/nbcli-4/drain' });
    expect(result.status.phase).toBe('Drained');
    expect(fake.budget.calls).toEqual([]);
  }, 60_000);
});

describe('a CLI drain waiting for a slot on a server that suggests continue-as-new after 20 events', () => {
  const canEnv = useWorkflowEnv({ dynamicConfig: { 'limit.historyCount.suggestContinueAsNew': 20 } });

  test('it continues as new while it waits (bounded history), then drains with one slot and gives it back', async () => {
    const fake = new FakeDrain('nbcan-1', [pod('web')]);
    fake.budget = new FakeBudget(1, 'nbcan');
    fake.budget.windowMs = 0; // each wait ends at once, as at the end of its window: renewals grow the history
    fake.budget.disrupted.set('elsewhere', 'cnr/other');
    let first = '';
    const result = await runDrain(canEnv(), fake, {
      during: async (h) => {
        first = h.firstExecutionRunId;
        await statusWhen(h, 'waiting', (s) => s.budgetWait !== undefined);
        await fakeWhen('renewed while waiting', () => fake.budget.callsOf('waitForDisruption').length >= 4);
        const d = await h.describe();
        expect(d.runId).not.toBe(first);
        expect(fake.callsOf('cordonNode')).toEqual([]);
        fake.budget.disrupted.delete('elsewhere');
      },
    });
    expect(result.status.phase).toBe('Drained');
    expect(fake.budget.most).toBe(1);
    expect(fake.budget.disrupted.size).toBe(0); // released by the run that ended
  }, 90_000);
});
