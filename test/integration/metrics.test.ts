// /metrics of the real processes during a real cycle (#15 §4): the worker (dist/worker/main.js)
// and the bridge (dist/starter/bridge/main.js) run as child processes on a private task queue with
// SLIPWAY_PROBE_PORT, the worker also with the Temporal SDK's exporter (SLIPWAY_TEMPORAL_METRICS_ADDR).
// A 2-node kwok group runs an app of 4 pods with a PDB that allows no disruption, so the first drain
// is refused until the test sees the worker report the blocked pods and deletes the PDB; the test
// scrapes all three endpoints during the cycle and after it, and asserts that the counters moved by
// what happened.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { CYCLE_NODE_REQUEST } from '../../api/cycle-node-request.js';
import { NODE_DISRUPTION_BUDGET } from '../../api/node-disruption-budget.js';
import { ensureFakeNodeGroup } from '../../stack/kwok/nodes.js';
import type { CycleNodeRequestObject } from '../../starter/bridge/cycle/objects.js';
import { WORKER_NODE_FLAGS } from '../../worker/config.js';
import { createNamespace, deleteGroupNodes, isRunning, testCluster, uniqueName } from '../support/cluster.js';
import { connectClient } from '../../starter/client.js';
import { deployApp } from '../support/cycle.js';
import { monitoringMetricNames } from '../support/monitoring.js';
import { waitFor } from '../support/wait.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

const c = testCluster();
const custom = c.config.makeApiClient(CustomObjectsApi);
const ns = uniqueName('it-metrics');
const group = uniqueName('it-metrics-g');
const taskQueue = uniqueName('it-metrics-tq');
const budgetName = uniqueName('it-metrics-nb');
const procs: ChildProcess[] = [];
const output = new Map<string, string>();

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

function start(name: string, script: string, env: Record<string, string>): void {
  const p = spawn('node', [...WORKER_NODE_FLAGS, script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  output.set(name, '');
  const keep = (d: Buffer) => output.set(name, output.get(name)! + d.toString());
  p.stdout!.on('data', keep);
  p.stderr!.on('data', keep);
  procs.push(p);
}

/** The samples of a Prometheus text exposition: `name{labels}` → value. The last text of each port is kept in tmpdir (slipway-metrics-<port>.txt) for a look. */
async function scrape(url: string): Promise<Map<string, number>> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  const text = await res.text();
  writeFileSync(join(tmpdir(), `slipway-metrics-${new URL(url).port}.txt`), text);
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const i = line.lastIndexOf(' ');
    out.set(line.slice(0, i), Number(line.slice(i + 1)));
  }
  return out;
}

const v = (m: Map<string, number>, key: string) => m.get(key) ?? 0;

afterAll(async () => {
  for (const p of procs) p.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 500));
  for (const p of procs) p.kill('SIGKILL');
  const { group: g, version, plural } = CYCLE_NODE_REQUEST;
  const l = (await custom.listNamespacedCustomObject({ group: g, version, plural, namespace: ns }).catch(() => ({ items: [] }))) as { items: CycleNodeRequestObject[] };
  for (const o of l.items) await custom.patchNamespacedCustomObject({ group: g, version, plural, namespace: ns, name: o.metadata.name, body: [{ op: 'remove', path: '/metadata/finalizers' }] }).catch(() => undefined);
  const { group: bg, version: bv, plural: bp } = NODE_DISRUPTION_BUDGET;
  await custom.deleteClusterCustomObject({ group: bg, version: bv, plural: bp, name: budgetName }).catch(() => undefined);
  await c.core.deleteNamespace({ name: ns }).catch(() => undefined);
  await deleteGroupNodes(c, group);
});

test('#25.4 the worker, its Temporal SDK exporter and the bridge serve /metrics, a 2-node cycle moves their counters, and every metric the rules and the dashboard use is there', async () => {
  await createNamespace(c, ns);
  await ensureFakeNodeGroup(c.core, group, 2);
  await deployApp(c, ns, group, 4, { minAvailable: 4 });
  await waitFor('4 app pods running', async () => (await c.core.listNamespacedPod({ namespace: ns })).items.filter(isRunning).length === 4, { timeoutMs: 60_000 });

  // A budget over the group (room for the one node a time the cycle takes): the budget gauges have a series.
  const nb = NODE_DISRUPTION_BUDGET;
  await custom.createClusterCustomObject({ group: nb.group, version: nb.version, plural: nb.plural, body: { apiVersion: `${nb.group}/${nb.version}`, kind: nb.kind, metadata: { name: budgetName }, spec: { nodeSelector: { matchLabels: { [NODE_GROUP_LABEL]: group } }, maxDisrupted: 1 } } });

  const [workerPort, bridgePort, sdkPort, standbyPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const common = { SLIPWAY_TASK_QUEUE: taskQueue };
  start('worker', 'dist/worker/main.js', { ...common, SLIPWAY_PROBE_PORT: String(workerPort), SLIPWAY_TEMPORAL_METRICS_ADDR: `127.0.0.1:${sdkPort}` });
  start('bridge', 'dist/starter/bridge/main.js', { ...common, SLIPWAY_PROBE_PORT: String(bridgePort), SLIPWAY_WATCH_NAMESPACE: ns, SLIPWAY_LEADER_NAMESPACE: ns, SLIPWAY_NODE_MAINTENANCES: 'false' });
  const worker = `http://127.0.0.1:${workerPort}/metrics`;
  const bridge = `http://127.0.0.1:${bridgePort}/metrics`;
  const sdk = `http://127.0.0.1:${sdkPort}/metrics`;
  const readyz = async (port: number) => {
    const res = await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined);
    return res ? `${res.status} ${(await res.text()).trim()}` : 'no answer';
  };
  let sdkNames = '';
  try {
    await waitFor('worker ready', async () => (await readyz(workerPort)).startsWith('200'), { timeoutMs: 60_000 });
    // The bridge is ready once it leads with synced caches (the only replica wins the Lease at once).
    await waitFor('bridge ready, leading', async () => (await readyz(bridgePort)) === '200 ok: leading: caches synced, reconciling', { timeoutMs: 60_000 });

    // A second replica stands by: ready, not leading, no caches.
    start('standby', 'dist/starter/bridge/main.js', { ...common, SLIPWAY_PROBE_PORT: String(standbyPort), SLIPWAY_WATCH_NAMESPACE: ns, SLIPWAY_LEADER_NAMESPACE: ns, SLIPWAY_NODE_MAINTENANCES: 'false' });
    await waitFor('standby replica ready', async () => (await readyz(standbyPort)) === '200 ok: standing by: not the leader', { timeoutMs: 60_000 });
    const sb = await scrape(`http://127.0.0.1:${standbyPort}/metrics`);
    expect([v(sb, 'slipway_bridge_leader'), v(sb, 'slipway_bridge_caches_synced')]).toEqual([0, 0]);

    const w0 = await scrape(worker);
    const b0 = await scrape(bridge);
    expect(v(b0, 'slipway_bridge_leader')).toBe(1);
    expect(v(b0, 'slipway_bridge_caches_synced')).toBe(1);
    expect(v(b0, 'slipway_cycle_requests{phase="Successful"}')).toBe(0);
    expect(v(w0, 'process_resident_memory_bytes')).toBeGreaterThan(0);

    const { group: g, version, plural, kind } = CYCLE_NODE_REQUEST;
    const name = uniqueName('cnr');
    await custom.createNamespacedCustomObject({
      group: g,
      version,
      plural,
      namespace: ns,
      body: { apiVersion: `${g}/${version}`, kind, metadata: { name, namespace: ns }, spec: { nodeGroupName: group, provider: 'kwok', selector: { matchLabels: { [NODE_GROUP_LABEL]: group } }, cycleSettings: { concurrency: 1 } } },
    });

    // During the cycle: the bridge shows the request in a phase that is not yet the end.
    let inFlight = '';
    const seen = new Set<string>(); // metric names seen on any scrape during and after the cycle
    const see = (m: Map<string, number>) => { for (const k of m.keys()) seen.add(k.split('{')[0]!); };
    let blockedSeen = 0;
    let pdbDeleted = false;
    await waitFor(
      'request Successful',
      async () => {
        const [bm, wm] = [await scrape(bridge), await scrape(worker)];
        see(bm);
        see(wm);
        for (const p of ['Pending', 'Initialised', 'ScalingUp', 'CordoningNode', 'WaitingTermination']) if (v(bm, `slipway_cycle_requests{phase="${p}"}`) === 1) inFlight ||= p;
        blockedSeen = Math.max(blockedSeen, v(wm, 'slipway_drain_pods_blocked_by_pdb'));
        if (blockedSeen > 0 && !pdbDeleted) {
          // Seen blocked: let the drain go on.
          await c.policy.deleteNamespacedPodDisruptionBudget({ name: 'app', namespace: ns });
          pdbDeleted = true;
        }
        const o = (await custom.getNamespacedCustomObject({ group: g, version, plural, namespace: ns, name })) as CycleNodeRequestObject;
        return o.status?.phase === 'Successful' && o.status.completedAt ? o : o.status?.phase === 'Failed' ? Promise.reject(new Error(`Failed: ${o.status.message}`)) : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 250 },
    );
    expect(inFlight).not.toBe('');

    const w1 = await waitFor('evictions counted', async () => {
      const m = await scrape(worker);
      return v(m, 'slipway_drain_pods_evicted_total') - v(w0, 'slipway_drain_pods_evicted_total') >= 4 && m;
    });
    const b1 = await waitFor('the bridge counted both nodes', async () => {
      const m = await scrape(bridge);
      return v(m, 'slipway_cycle_requests{phase="Successful"}') === 1 && v(m, 'slipway_nodes_cycled_total') === 2 && m;
    });
    // The PDB refused the first node's evictions (its pods: about half the app) until it went; then nothing is blocked.
    expect(blockedSeen).toBeGreaterThanOrEqual(1);
    expect(v(w1, 'slipway_drain_evictions_refused_total{reason="pdb"}')).toBeGreaterThanOrEqual(v(w0, 'slipway_drain_evictions_refused_total{reason="pdb"}') + blockedSeen);
    expect(v(w1, 'slipway_drain_pods_blocked_by_pdb')).toBe(0);
    expect(v(b1, 'slipway_nodes_failed_total')).toBe(0);
    expect(v(b1, 'slipway_cycle_nodes{phase="Successful"}')).toBe(2);
    expect(v(b1, 'slipway_drain_duration_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(v(b1, 'slipway_bridge_status_lag_seconds_count{kind="CycleNodeRequest"}')).toBeGreaterThan(0);
    expect(b1.get('slipway_reconcile_errors_total{kind="CycleNodeRequest"}')).toBe(0);
    expect(w1.get('slipway_drain_pods_force_deleted_total{trigger="operator"}')).toBe(0);
    expect(b1.has('slipway_reconcile_queue_depth{kind="CycleNodeRequest"}')).toBe(true);

    // #25.4: the build, and controller-runtime's reconcile pair per kind.
    const pkgVersion = JSON.parse(readFileSync('package.json', 'utf8')).version as string;
    for (const m of [w1, b1]) expect([...m.keys()].some((k) => k.startsWith(`slipway_build_info{version="${pkgVersion}",`) && k.includes(`node="${process.versions.node}"`))).toBe(true);
    expect(v(b1, 'slipway_reconcile_total{kind="CycleNodeRequest",result="success"}')).toBeGreaterThan(0);
    expect(v(b1, 'slipway_reconcile_duration_seconds_count{kind="CycleNodeRequest"}')).toBeGreaterThan(0);
    expect(b1.has('slipway_drain_blocked_nodes{reason="pdb"}')).toBe(true);
    expect(b1.get(`slipway_budget_exhausted{budget="${budgetName}"}`)).toBe(0);

    // What the failure alerts count only exists once it happened (the SDK exports a counter from its
    // first increment): a drain refusing its input fails its workflow, a workflow type the worker does
    // not know fails its workflow task.
    const client = await connectClient();
    const failed = await client.workflow.start('drainWorkflow', { taskQueue, workflowId: uniqueName('it-metrics-bad-drain'), args: [{ nodeName: 'no-such-node', options: { podEvictionTimeout: { after: 'soon', policy: 'Nope' } } }] });
    await expect(failed.result()).rejects.toThrow();
    const unknown = await client.workflow.start('noSuchWorkflow', { taskQueue, workflowId: uniqueName('it-metrics-unknown') });
    await waitFor('the unknown workflow type failing a task', async () => [...(await scrape(sdk)).keys()].some((k) => k.startsWith('temporal_workflow_task_execution_failed_total{')));
    await unknown.terminate('test done');
    await client.connection.close();

    // The Temporal SDK's own exporter: the worker's activity and workflow task counters moved.
    const s = await scrape(sdk);
    see(w1);
    see(b1);
    see(s);
    // #25.4: every metric the rules and the dashboard use is served by one of the three ports
    // (histograms by their _bucket series).
    const missing = monitoringMetricNames().filter((n) => !seen.has(n));
    expect(missing).toEqual([]);
    const sum = (name: RegExp) => [...s].filter(([k]) => name.test(k) && k.includes(`"${taskQueue}"`)).reduce((n, [, x]) => n + x, 0);
    const names = [...new Set([...s.keys()].map((k) => k.split('{')[0]))];
    sdkNames = names.join(' ');
    expect(sum(/^temporal_activity_execution_latency\w*_count\{/)).toBeGreaterThan(0);
    expect(sum(/^temporal_workflow_completed\w*\{/)).toBeGreaterThan(0);
  } catch (err) {
    if (sdkNames) console.log(`Temporal SDK metric names: ${sdkNames}`);
    for (const [n, o] of output) console.log(`--- ${n}\n${o.slice(-4000)}`);
    throw err;
  }
}, 300_000);
