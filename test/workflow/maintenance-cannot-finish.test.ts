// #27.4 a maintenance that can never finish says so at once: without spec.rollout a maintenance
// holds every node it cordons until Complete, so 3 nodes under a NodeDisruptionBudget of 1 can
// never all be drained. The condition CannotFinish=True names the budget in the Idle preview pass
// and at Drain entry, before any node has waited for a slot; with a rollout, or a budget that
// holds them all, there is none. Scripted activities (test/support/fake-maintenance.ts) with an
// in-memory budget (test/support/fake-budget.ts).
import { setStageUpdate } from '../../workflows/messages.js';
import type { MaintenanceStatus } from '../../workflows/maintenance/types.js';
import { FakeBudget } from '../support/fake-budget.js';
import { FakeCluster, maintenanceStatusWhen, maintenanceTestIds, startMaintenance } from '../support/fake-maintenance.js';
import { useWorkflowEnv } from '../support/workflow-env.js';

const env = useWorkflowEnv();
const MESSAGE = (budget: string) => `3 nodes selected; NodeDisruptionBudget ${budget} allows 1 at a time: this maintenance can finish only with spec.rollout`;
const cannotFinish = (s: MaintenanceStatus) => s.conditions.find((c) => c.type === 'CannotFinish');

describe('#27.4 CannotFinish: a maintenance without a rollout whose nodes outnumber a budget', () => {
  test.concurrent('Idle: said in the first preview pass, naming the budget; Drain: said at entry, while no node has been cordoned; released at Complete', async () => {
    const nodes = ['ncf-1', 'ncf-2', 'ncf-3'];
    const fake = new FakeCluster(nodes);
    fake.budget = new FakeBudget(1, 'ncf');
    await env().withWorker(fake.activities(), async (tq) => {
      const h = await startMaintenance(env(), tq, 'ncf');
      const idle = await maintenanceStatusWhen(h, 'Idle with its preview', (x) => x.stage === 'Idle' && !!cannotFinish(x));
      expect(cannotFinish(idle)).toEqual({ type: 'CannotFinish', status: 'True', reason: 'BudgetTooSmall', message: MESSAGE('ncf') });
      expect(fake.budget.callsOf('maintenanceBudgetFit').map((c) => c.input)).toEqual([{ nodes }]);

      // Drain: the check runs at entry, before the first node asks for its slot.
      fake.budget.disrupted.set('elsewhere', 'cnr/other'); // no slot: nothing is cordoned meanwhile
      await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Drain' }] });
      // Drain is published as soon as it is entered; the entry check follows within the same pass.
      const drain = await maintenanceStatusWhen(h, 'Drain, checked at entry', (x) => x.stage === 'Drain' && fake.budget!.callsOf('maintenanceBudgetFit').length >= 2);
      expect(cannotFinish(drain)).toMatchObject({ status: 'True', message: MESSAGE('ncf') });
      const fits = fake.budget.callsOf('maintenanceBudgetFit');
      expect(fits).toHaveLength(2);
      const firstAsk = fake.budget.calls.find((c) => c.name === 'acquireDisruption');
      if (firstAsk) expect(firstAsk.startedAt).toBeGreaterThanOrEqual(fits[1]!.endedAt!);
      expect(fake.callsOf('writeMaintenanceNodeState')).toEqual([]);

      await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
      const done = await h.result();
      expect(cannotFinish(done)).toMatchObject({ status: 'False', reason: 'Completed' });
    }, { workflowIds: maintenanceTestIds(['ncf'], nodes) });
  }, 90_000);

  test.concurrent('with spec.rollout: no check and no condition', async () => {
    const nodes = ['ncr-1', 'ncr-2', 'ncr-3'];
    const fake = new FakeCluster(nodes);
    fake.budget = new FakeBudget(1, 'ncr');
    await env().withWorker(fake.activities(), async (tq) => {
      const h = await startMaintenance(env(), tq, 'ncr', { rollout: { maxUnavailable: 1, completion: { manual: true } } });
      const s = await maintenanceStatusWhen(h, 'Idle with its preview', (x) => x.stage === 'Idle' && x.message.includes('preview computed'));
      expect(cannotFinish(s)).toBeUndefined();
      expect(fake.budget.callsOf('maintenanceBudgetFit')).toEqual([]);
      await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
      await h.result();
    }, { workflowIds: maintenanceTestIds(['ncr'], nodes) });
  }, 90_000);

  test.concurrent('a budget that holds every node at once: asked, and no condition', async () => {
    const nodes = ['ncok-1', 'ncok-2', 'ncok-3'];
    const fake = new FakeCluster(nodes);
    fake.budget = new FakeBudget(3, 'ncok');
    await env().withWorker(fake.activities(), async (tq) => {
      const h = await startMaintenance(env(), tq, 'ncok');
      const s = await maintenanceStatusWhen(h, 'Idle with its preview', (x) => x.stage === 'Idle' && x.message.includes('preview computed'));
      expect(fake.budget.callsOf('maintenanceBudgetFit')).toHaveLength(1);
      expect(cannotFinish(s)).toBeUndefined();
      await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
      await h.result();
    }, { workflowIds: maintenanceTestIds(['ncok'], nodes) });
  }, 90_000);
});
