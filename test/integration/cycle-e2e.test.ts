// Node cycling end to end through custom resources: the bridge, a worker process, the kwok
// provider. A worker killed and a bridge restarted mid-cycle do not stop the cycle; a drain
// blocked by a PDB waits (no flapping) until cyclingTimeout, then healing puts the node back.
import { spawn, type ChildProcess } from 'node:child_process';
import { DETACHED_FROM_GROUP } from '../../api/node-groups.js';
import { ensureFakeNodeGroup } from '../../stack/kwok/nodes.js';
import { createWorker } from '../../worker/worker.js';
import { temporalSettings } from '../../shared/temporal.js';
import { BridgeFixture } from '../support/bridge.js';
import { readAudit, testCluster } from '../support/cluster.js';
import { deployApp } from '../support/cycle.js';
import { waitFor } from '../support/wait.js';
import { CYCLED_BY } from '../../api/cycle-node-request.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

async function app(f: BridgeFixture, group: string, replicas: number, pdb: { minAvailable?: number; maxUnavailable?: number }, grace: number) {
  await deployApp(testCluster(), f.ns, group, replicas, pdb, grace);
  await waitFor(`${replicas} app pods Running`, async () => (await f.c.core.listNamespacedPod({ namespace: f.ns })).items.filter((p) => p.status?.phase === 'Running').length === replicas);
}

describe('a worker killed and a bridge restarted mid-cycle', () => {
  const f = new BridgeFixture('it-e2e-kill');
  const workers: ChildProcess[] = [];
  const workerProcess = () => {
    const p = spawn('node', ['dist/worker/main.js'], { env: { ...process.env, SLIPWAY_TASK_QUEUE: f.taskQueue }, stdio: ['ignore', 'ignore', 'inherit'] });
    workers.push(p);
    return p;
  };
  beforeAll(() => f.setup());
  afterAll(async () => {
    for (const w of workers) w.kill('SIGKILL');
    await f.teardown();
  });

  test('the cycle still completes, with one workflow, each old node removed once', async () => {
    const group = f.ns;
    const old = await ensureFakeNodeGroup(f.c.core, group, 4);
    await app(f, group, 8, { maxUnavailable: 1 }, 4);
    const first = workerProcess();
    const bridge = await f.bridge({ tag: 'first' });
    const startedAt = new Date();
    await f.createCnr('cycle', { nodeGroupName: group, selector: { matchLabels: { [NODE_GROUP_LABEL]: group } }, cycleSettings: { concurrency: 2 } });
    await waitFor('a node draining', async () => (await f.getCnr('cycle'))?.status?.nodes?.some((n) => n.phase === 'DrainingPods'), { timeoutMs: 60_000 });

    first.kill('SIGKILL');
    await f.stopBridge(bridge);
    await new Promise((r) => setTimeout(r, 2000));
    workerProcess();
    await f.bridge({ tag: 'second' });

    const done = await waitFor('the request Successful', async () => {
      const o = await f.getCnr('cycle');
      return o?.status?.phase === 'Successful' && o;
    }, { timeoutMs: 150_000, intervalMs: 500 });
    expect(done.status!.nodesCycled).toBe(4);
    expect(await f.executions(done.status!.workflowId!)).toBe(1);
    const statuses = await f.nodeStatuses();
    expect(statuses.map((s) => s.status?.phase)).toEqual(['Successful', 'Successful', 'Successful', 'Successful']);
    const deletions = (await readAudit()).filter(
      (e) => e.objectRef?.resource === 'nodes' && e.verb === 'delete' && e.responseStatus?.code === 200 && new Date(e.requestReceivedTimestamp) >= startedAt && old.includes(e.objectRef.name!),
    );
    expect(deletions.map((d) => d.objectRef!.name).sort()).toEqual([...old].sort());
  }, 240_000);
});

describe('a drain blocked by a PDB', () => {
  const f = new BridgeFixture('it-e2e-pdb');
  let stopWorker: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    await f.setup();
    const { worker } = await createWorker({ deps: { kube: f.c }, settings: { ...temporalSettings(), taskQueue: f.taskQueue } });
    const running = worker.run();
    stopWorker = async () => {
      worker.shutdown();
      await running;
    };
  });
  afterAll(async () => {
    await stopWorker?.();
    await f.teardown();
  });

  test('waits and reports without flapping until cyclingTimeout, then fails and heals the node', async () => {
    const group = f.ns;
    const old = await ensureFakeNodeGroup(f.c.core, group, 2);
    await app(f, group, 1, { minAvailable: 1 }, 1); // never relents
    await f.bridge();
    await f.createCnr('cycle', { nodeGroupName: group, selector: { matchLabels: { [NODE_GROUP_LABEL]: group } }, cycleSettings: { concurrency: 1, cyclingTimeout: '1m' } }); // the shortest admitted
    // While blocked, the node's status names the PDB.
    const blocked = await waitFor('the PDB block in CycleNodeStatus', async () =>
      (await f.nodeStatuses()).find((s) => s.status?.drainMessage?.includes('disruption budget app')), { timeoutMs: 60_000 });
    expect(blocked.status!.phase).toBe('DrainingPods');
    const failed = await waitFor('the request Failed', async () => {
      const o = await f.getCnr('cycle');
      return o?.status?.phase === 'Failed' && o;
    }, { timeoutMs: 120_000 });
    expect(failed.status!.message).toContain('cyclingTimeout');
    expect(failed.status!.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False' });
    // No flapping while blocked (Cyclops #10): one WaitingTermination per batch (two nodes at
    // concurrency 1), no transition repeated, and the blocked batch ends in Failed.
    const events = (await f.events('cycle')).filter((e) => e.reason?.startsWith('Phase'));
    expect(events.every((e) => (e.count ?? 1) === 1)).toBe(true);
    expect(events.filter((e) => e.reason === 'PhaseWaitingTermination').length).toBeLessThanOrEqual(2);
    expect(events.filter((e) => e.reason === 'PhaseFailed')).toHaveLength(1);
    // Healing: the node whose cycle failed is back in its group, schedulable and unmarked; a node
    // cycled before the failure stays replaced.
    const byPhase = (p: string) => failed.status!.nodes!.filter((n) => n.phase === p).map((n) => n.name);
    expect(byPhase('Failed').length).toBe(1);
    const nodes = (await f.c.core.listNode({ labelSelector: `${NODE_GROUP_LABEL}=${group}` })).items;
    for (const name of byPhase('Failed')) {
      const n = nodes.find((x) => x.metadata!.name === name);
      expect(n).toBeDefined();
      expect(n!.spec?.unschedulable).toBeFalsy();
      expect(n!.metadata?.annotations?.[DETACHED_FROM_GROUP]).toBeUndefined();
      expect(n!.metadata?.annotations?.[CYCLED_BY]).toBeUndefined();
    }
    for (const name of byPhase('Successful')) expect(nodes.find((x) => x.metadata!.name === name)).toBeUndefined();
    expect(old).toEqual(expect.arrayContaining([...byPhase('Failed'), ...byPhase('Successful')]));
  }, 240_000);
});
