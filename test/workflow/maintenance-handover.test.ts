// Issue 26 §5: the hand-over between plan entries, counted in serial Temporal steps from the
// histories of the maintenance, its node coordinators and their drains (bench/history-chain.ts):
// from a wave wait that saw an entry's last pod leave to the eviction of the next entry's first pod.
import { maintenanceDrainWorkflowId } from '../../workflows/ids.js';
import { drainStatusQuery, setStageUpdate } from '../../workflows/messages.js';
import { handoverChains, type Histories, type HistoryEvent } from '../../bench/history-chain.js';
import { FakeDrain, pod } from '../support/fake-drain.js';
import { FakeCluster, maintenanceStatusWhen, maintenanceTestIds, startMaintenance } from '../support/fake-maintenance.js';
import { until } from '../support/scripted.js';
import { waitFor } from '../support/wait.js';
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

  test.concurrent('#26.5 two intersecting maintenances (A: nodes 1-2, B: nodes 2-3): every hand-over, the shared node\'s too, in at most 7 serial steps (5 plus one look at the pods when the shared node\'s look-ahead was taken before the other maintenance\'s advance); each node drains entry by entry', async () => {
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
          // Which maintenance's advance reaches the shared node last is a race: when its drain's look
          // ahead predates it, the drain looks at the pods again (classifyPods: a task and an activity).
          expect(chains.filter((c) => c.steps > 7).map((c) => `${c.steps} steps: ${c.path.join(' ← ')}`)).toEqual([]);
          for (const h of hs) await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
          for (const h of hs) await h.result();
        }, { workflowIds: [maintenanceDrainWorkflowId('nhs-3')] }),
      { workflowIds: [maintenanceDrainWorkflowId('nhs-2')] }),
    { workflowIds: [...maintenanceTestIds(names, nodes), maintenanceDrainWorkflowId('nhs-1')] });
  }, 120_000);
});

describe('#26.5 a holderAdvanced in flight when a CycleNodeRequest claims the node (NM-7.7)', () => {
  test.concurrent('#26.5 the claimed node\'s drain evicts nothing more, though an advance reaches it before its coordinator has seen the claim; it drains on once the claim goes', async () => {
    const nodes = ['nrc-1', 'nrc-2'];
    const fake = new FakeCluster(nodes);
    const [d1, d2] = nodes.map(drainWithEntries) as [FakeDrain, FakeDrain];
    // A PDB holds nrc-2's first pod: the maintenance waits at entry 0 while nrc-1 has finished it.
    d2.refusals.set('app/e0', 'Cannot evict pod as it would violate the pod\'s disruption budget.');
    // nrc-1's coordinator write is held while the test says so: the coordinator has not seen the claim yet.
    let letWrite = () => {};
    const writing = new Promise<void>((r) => (letWrite = r));
    let holdWrites = false;
    fake.beforeNodeWrite = async (i) => (holdWrites && i.node === 'nrc-1' ? writing : undefined);
    const claim = (by: string | undefined) => {
      d1.node.claimedBy = by; // what the drain's reads show
      fake.nodes.get('nrc-1')!.claimedBy = by; // what the node watches and the coordinator's write see
    };
    const ids = maintenanceTestIds(['nrc'], nodes);
    const cluster = fake.activities();
    // A drain watches its node with the coordinator's node watch while a claim holds it.
    const withNodeWatch = (d: FakeDrain) => ({ ...d.activities(), watchMaintenanceNode: cluster.watchMaintenanceNode });
    await env().withWorker({ ...withNodeWatch(d1), ...cluster }, async (tq) =>
      env().withWorker(withNodeWatch(d2), async () => {
        const h = await startMaintenance(env(), tq, 'nrc', { stage: 'Drain', drainPlan: PLAN });
        const drain1 = env().client.workflow.getHandle(maintenanceDrainWorkflowId('nrc-1'));
        await waitFor('nrc-1 finished at entry 0', async () => d1.evictionsAsked().length === 1 && (await drain1.query(drainStatusQuery)).finished === true, { timeoutMs: 45_000 });
        // A cycle claims nrc-1 (slipway.dev/cycled-by; its held-by was gone a moment, NM-2.5).
        holdWrites = true;
        claim('test/cnr');
        // nrc-2's pod goes: the maintenance moves on and tells both drains (holderAdvanced).
        d2.refusals.clear();
        await waitFor('nrc-2 at entry 1', async () => d2.evictionsAsked().includes('app/e1'), { timeoutMs: 45_000 });
        await waitFor('nrc-1 acted on the advance', async () => d1.evictionsAsked().includes('app/e1') || (await drain1.query(drainStatusQuery)).claimedBy !== undefined, { timeoutMs: 45_000 });
        expect(d1.evictionsAsked()).toEqual(['app/e0']);
        expect((await drain1.query(drainStatusQuery)).message).toContain('Cycled by CycleNodeRequest test/cnr');
        // The cycle lets go (healing removes its claim): the node is held again and drains to the end.
        claim(undefined);
        letWrite();
        await maintenanceStatusWhen(h, 'drained', drained);
        expect(d1.evictionsAsked()).toEqual(['app/e0', 'app/e1', 'app/e2']);
        await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
        await h.result();
      }, { workflowIds: [maintenanceDrainWorkflowId('nrc-2')] }),
    { workflowIds: [...ids, maintenanceDrainWorkflowId('nrc-1')] });
  }, 120_000);
});
