// Issue 26 §5: the hand-over between plan entries, counted in serial Temporal steps from the
// histories of the maintenance, its node coordinators and their drains (bench/history-chain.ts):
// from a wave wait that saw an entry's last pod leave to the eviction of the next entry's first pod.
import { maintenanceDrainWorkflowId } from '../../workflows/ids.js';
import { setStageUpdate } from '../../workflows/messages.js';
import { handoverChains, type Histories, type HistoryEvent } from '../../bench/history-chain.js';
import { FakeDrain, pod } from '../support/fake-drain.js';
import { FakeCluster, maintenanceStatusWhen, maintenanceTestIds, startMaintenance } from '../support/fake-maintenance.js';
import { until } from '../support/scripted.js';
import type { SelectionWatchInput } from '../../activities/maintenance/watch.js';
import { useWorkflowEnv } from '../support/workflow-env.js';

const env = useWorkflowEnv();

const PLAN = [1000, 2000, 3000].map((podPriority) => ({ podType: 'Default' as const, podPriority }));
const drained = (s: { conditions: Array<{ type: string; status: string }> }) => s.conditions.some((c) => c.type === 'Drained' && c.status === 'True');

async function histories(ids: string[]): Promise<Histories> {
  const out: Histories = new Map();
  for (const id of ids) out.set(id, ((await env().client.workflow.getHandle(id).fetchHistory()).events ?? []) as unknown as HistoryEvent[]);
  return out;
}

/** A drain on `node` with one pod per plan entry (priorities just under each entry's), each leaving 200 ms after its eviction. */
function drainWithEntries(node: string): FakeDrain {
  const d = new FakeDrain(node, PLAN.map((_, i) => pod(`e${i}`)), { cordoned: true });
  for (const [i, e] of PLAN.entries()) d.priorities.set(`app/e${i}`, e.podPriority - 500);
  d.leaveAfterMs = 200;
  return d;
}

describe('#26.5 the hand-over between plan entries', () => {
  test.concurrent('#26.5 one maintenance on its own node: at most 5 serial steps from the last pod of an entry leaving to the next entry\'s first eviction', async () => {
    const nodes = ['nho-1'];
    const fake = new FakeCluster(nodes);
    const drain = drainWithEntries('nho-1');
    const ids = [...maintenanceTestIds(['nho'], nodes), maintenanceDrainWorkflowId('nho-1')];
    await env().withWorker({ ...drain.activities(), ...fake.activities() }, async (tq) => {
      const h = await startMaintenance(env(), tq, 'nho', { stage: 'Drain', drainPlan: PLAN });
      await maintenanceStatusWhen(h, 'drained', drained);
      expect(drain.evictionsAsked()).toEqual(['app/e0', 'app/e1', 'app/e2']);
      const chains = handoverChains(await histories(ids));
      // Two hand-overs (entry 1 → 2, 2 → 3), each one chain of causes across the workflows.
      expect(chains).toHaveLength(2);
      // Over 5, the failure shows the chain: each step, latest first.
      const over = chains.filter((c) => c.steps > 5).map((c) => `${c.steps} steps: ${c.path.join(' ← ')}`);
      expect(over).toEqual([]);
      await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
      await h.result();
    }, { workflowIds: ids });
  }, 90_000);

  test.concurrent('#26.5 two intersecting maintenances (A: nodes 1-2, B: nodes 2-3): every hand-over, the shared node\'s too, in at most 5 serial steps; each node drains entry by entry', async () => {
    const nodes = ['nhs-1', 'nhs-2', 'nhs-3'];
    const fake = new FakeCluster(nodes);
    const drains = nodes.map(drainWithEntries);
    const takes: Record<string, string[]> = { a: ['nhs-1', 'nhs-2'], b: ['nhs-2', 'nhs-3'] };
    const selector = (pool: string) => ({ nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In' as const, values: [pool] }] }] });
    // Each maintenance selects its own nodes (the fake's selection takes every node); nothing joins or leaves.
    const select = async (i: { nodeSelector: ReturnType<typeof selector> }) => {
      const ns = takes[i.nodeSelector.nodeSelectorTerms[0]!.matchExpressions[0]!.values[0]!]!;
      return { nodes: ns, totalNodes: nodes.length + 1, controlPlaneNodes: 0, controlPlaneSelected: 0 };
    };
    const watch = async (w: SelectionWatchInput) => ({ changed: !(await until(() => false, w.renewMs ?? 60_000)), selection: await select(w as never) });
    const names = ['nhs-a', 'nhs-b'];
    const ids = [...maintenanceTestIds(names, nodes), ...nodes.map(maintenanceDrainWorkflowId)];
    const [d1, d2, d3] = drains as [FakeDrain, FakeDrain, FakeDrain];
    const cluster = { ...fake.activities(), selectMaintenanceNodes: select, watchMaintenanceSelection: watch };
    await env().withWorker({ ...d1.activities(), ...cluster }, async (tq) =>
      env().withWorker(d2.activities(), async () =>
        env().withWorker(d3.activities(), async () => {
          const hs = [await startMaintenance(env(), tq, 'nhs-a', { stage: 'Drain', drainPlan: PLAN, nodeSelector: selector('a') }), await startMaintenance(env(), tq, 'nhs-b', { stage: 'Drain', drainPlan: PLAN, nodeSelector: selector('b') })];
          for (const h of hs) await maintenanceStatusWhen(h, 'drained', drained);
          for (const d of drains) expect(d.evictionsAsked()).toEqual(['app/e0', 'app/e1', 'app/e2']);
          const chains = handoverChains(await histories(ids));
          // Two hand-overs on each node; the shared node's new targets come from the second advance to reach its drain.
          expect(chains.filter((c) => c.drain === maintenanceDrainWorkflowId('nhs-2'))).toHaveLength(2);
          expect(chains).toHaveLength(6);
          expect(chains.filter((c) => c.steps > 5).map((c) => `${c.steps} steps: ${c.path.join(' ← ')}`)).toEqual([]);
          for (const h of hs) await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
          for (const h of hs) await h.result();
        }, { workflowIds: [maintenanceDrainWorkflowId('nhs-3')] }),
      { workflowIds: [maintenanceDrainWorkflowId('nhs-2')] }),
    { workflowIds: [...maintenanceTestIds(names, nodes), maintenanceDrainWorkflowId('nhs-1')] });
  }, 120_000);
});
