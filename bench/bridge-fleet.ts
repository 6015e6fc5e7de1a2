// The CRD bridge at fleet size (#28): one CycleNodeRequest over SLIPWAY_BENCH_FLEET_NODES (20,000)
// nodes, each with its CycleNodeStatus, and SLIPWAY_BENCH_FLEET_MAINTENANCES (2,000) Idle
// NodeMaintenances selecting nothing. Prints figures; asserts nothing.
//   0. Set-up (not measured): the request and its CycleNodeStatus objects created straight through
//      the apiserver (32 at a time, each with the status the bridge would write), the maintenances
//      created, a worker with every production workflow and the request's stand-in
//      (bench/fleet-request.ts: its nodes all touched, moved on a signal).
//   1. The bridge started as in production (its own process, dist/starter/bridge/main.js) on a
//      private task queue: time until it leads and has every maintenance's workflow in status.
//   2. An idle window (SLIPWAY_BENCH_FLEET_IDLE_S, 30 s): nothing changes.
//   3. SLIPWAY_BENCH_FLEET_ROUNDS (10) rounds of a batch of 100 nodes moved to DrainingPods, then to
//      Successful: the signal → each node's CycleNodeStatus showing it (lag p50/p99/max), and → the
//      request's nodesByPhase counting it.
// For 1-3: the bridge's RSS (now and peak, /proc), its CPU, and the apiserver's requests on
// Slipway's kinds and Events per second (apiserver_request_total). Clean-up removes everything.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, openSync } from 'node:fs';
import { CustomObjectsApi, Watch } from '@kubernetes/client-node';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import { GROUP, VERSION } from '../api/crd.js';
import { CYCLE_NODE_REQUEST, CYCLE_NODE_STATUS, CYCLE_REQUEST_LABEL, CycleSettings, type CycleNodeRequestStatus } from '../api/cycle-node-request.js';
import { NODE_MAINTENANCE, type NodeMaintenanceStatus } from '../api/node-maintenance.js';
import { API_VERSION } from '../api/names.js';
import { NODE_GROUP_LABEL } from '../api/node-groups.js';
import { createKube } from '../kube/client.js';
import { mergePatch } from '../kube/patch.js';
import { cycleNodeStatusName, requestLabelValue } from '../starter/bridge/cycle/names.js';
import { ownerReference, type CycleNodeRequestObject, type CycleNodeStatusObject } from '../starter/bridge/cycle/objects.js';
import { nodeStatus } from '../starter/bridge/cycle/status.js';
import { connectClient } from '../starter/client.js';
import { temporalSettings } from '../shared/temporal.js';
import { createWorker } from '../worker/worker.js';
import { cycleWorkflowId } from '../workflows/ids.js';
import { fleetAdvanceSignal, fleetNode, type FleetAdvance } from './fleet-request.js';
import { cpuSeconds, delta, scrapeRequests, type Counters } from './metrics.js';

try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // installed by another benchmark in this process
}
const NODES = Number(process.env.SLIPWAY_BENCH_FLEET_NODES ?? 20_000);
const MAINTENANCES = Number(process.env.SLIPWAY_BENCH_FLEET_MAINTENANCES ?? 2_000);
const IDLE_S = Number(process.env.SLIPWAY_BENCH_FLEET_IDLE_S ?? 30);
const ROUNDS = Number(process.env.SLIPWAY_BENCH_FLEET_ROUNDS ?? 10);
const BATCH = 100;
const PARALLEL = 32;

const kube = createKube();
const custom = kube.config.makeApiClient(CustomObjectsApi);
const run = `bench-fleet-${Date.now().toString(36)}`;
const ns = run;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const stamp = () => new Date().toISOString();
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]!;
const fig = (xs: number[]) => (xs.length ? `p50 ${pct(xs, 50).toFixed(0)} ms, p99 ${pct(xs, 99).toFixed(0)} ms, max ${Math.max(...xs).toFixed(0)} ms (n=${xs.length})` : 'no samples');

/** Runs `f` over `items`, PARALLEL at a time. */
async function pool<T>(items: T[], f: (t: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: PARALLEL }, async () => {
    while (next < items.length) await f(items[next++]!);
  }));
}

const where = { group: GROUP, version: VERSION, plural: NODE_MAINTENANCE.plural };
const maintenances = Array.from({ length: MAINTENANCES }, (_, i) => `${run}-${i}`);
const { group, version, plural, kind } = CYCLE_NODE_REQUEST;
const requestName = `fleet-${NODES}`;
let req: CycleNodeRequestObject | undefined;
let bridge: ChildProcess | undefined;

/** Removes everything the run made (also when stopped: SIGINT, SIGTERM), the bridge first. */
let cleaning: Promise<void> | undefined;
function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    const t = performance.now();
    if (bridge && bridge.exitCode === null) {
      const b = bridge;
      const exited = new Promise((r) => b.once('exit', r));
      b.kill('SIGTERM');
      await exited;
    }
    if (req) await client.workflow.getHandle(cycleWorkflowId({ namespace: ns, name: requestName, uid: req.metadata.uid! })).terminate('bench clean-up').catch(() => undefined);
    const nmIds = ((await custom.listClusterCustomObject({ ...where })) as { items: Array<{ metadata: { name: string }; status?: NodeMaintenanceStatus }> }).items
      .filter((o) => o.metadata.name.startsWith(run) && o.status?.workflowId)
      .map((o) => o.status!.workflowId!);
    await pool(maintenances, (name) => custom.patchClusterCustomObject({ ...where, name, body: { metadata: { finalizers: null } } }, mergePatch).catch(() => undefined));
    await pool(maintenances, (name) => custom.deleteClusterCustomObject({ ...where, name }).catch(() => undefined));
    await pool(nmIds, (id) => client.workflow.getHandle(id).terminate('bench clean-up').catch(() => undefined));
    await custom.patchNamespacedCustomObject({ group, version, plural, namespace: ns, name: requestName, body: { metadata: { finalizers: null } } }, mergePatch).catch(() => undefined);
    await kube.core.deleteNamespace({ name: ns }).catch(() => undefined);
    for (let i = 0; i < 300; i++) {
      if (await kube.core.readNamespace({ name: ns }).then(() => false, () => true)) break;
      await sleep(1000);
    }
    console.log(`clean-up in ${((performance.now() - t) / 1000).toFixed(0)} s`);
  })();
  return cleaning;
}
for (const sig of ['SIGINT', 'SIGTERM'] as const) process.once(sig, () => void cleanUp().finally(() => process.exit(1)));

// ---- 0. Set-up.
const t0 = performance.now();
await kube.core.createNamespace({ body: { metadata: { name: ns } } });
const settings = { ...temporalSettings(), taskQueue: run };
const client = await connectClient(settings);
const workflowsPath = fileURLToPath(new URL('./fleet-workflows.js', import.meta.url));
const { worker, connection } = await createWorker({ deps: { kube }, settings, overrides: { workflowsPath } });
const working = worker.run();
try {
  const spec = { nodeGroupName: 'bench-fleet', selector: { matchLabels: { [NODE_GROUP_LABEL]: 'bench-fleet' } }, cycleSettings: { concurrency: BATCH } };
  req = (await custom.createNamespacedCustomObject({ group, version, plural, namespace: ns, body: { apiVersion: API_VERSION, kind, metadata: { name: requestName }, spec } })) as CycleNodeRequestObject;
  const cycleSettings = CycleSettings.parse(spec.cycleSettings);
  const S = CYCLE_NODE_STATUS;
  await pool(Array.from({ length: NODES }, (_, i) => i), async (i) => {
    const n = fleetNode(i);
    const name = cycleNodeStatusName(requestName, n.nodeName);
    const body: CycleNodeStatusObject = {
      apiVersion: API_VERSION,
      kind: 'CycleNodeStatus',
      metadata: { name, namespace: ns, labels: { [CYCLE_REQUEST_LABEL]: requestLabelValue(requestName) }, ownerReferences: [ownerReference(req!)] },
      spec: { nodeName: n.nodeName, requestName, cycleSettings },
    };
    await custom.createNamespacedCustomObject({ group: S.group, version: S.version, plural: S.plural, namespace: ns, body });
    await custom.patchNamespacedCustomObjectStatus({ group: S.group, version: S.version, plural: S.plural, namespace: ns, name, body: { status: nodeStatus(n, 1) } }, mergePatch);
  });
  const tObjects = performance.now();
  console.log(`${stamp()} ${NODES} CycleNodeStatus objects created with their status in ${((tObjects - t0) / 1000).toFixed(0)} s`);
  const nothing = { nodeSelectorTerms: [{ matchExpressions: [{ key: 'example.com/bench-selects-nothing', operator: 'In', values: ['none'] }] }] };
  await pool(maintenances, (name) =>
    custom.createClusterCustomObject({ ...where, body: { apiVersion: API_VERSION, kind: NODE_MAINTENANCE.kind, metadata: { name }, spec: { nodeSelector: nothing, stage: 'Idle', reason: 'bench' } } }),
  );
  console.log(`${stamp()} ${MAINTENANCES} NodeMaintenances created in ${((performance.now() - tObjects) / 1000).toFixed(0)} s`);

  // ---- 1. The bridge, in its own process.
  const bridgeLog = `/tmp/${run}-bridge.log`;
  const out = openSync(bridgeLog, 'a');
  const child = (bridge = spawn('node', ['dist/starter/bridge/main.js'], {
    env: { ...process.env, SLIPWAY_TASK_QUEUE: run, SLIPWAY_WATCH_NAMESPACE: ns, SLIPWAY_LEADER_NAMESPACE: ns, SLIPWAY_NODE_GROUPS: 'false', SLIPWAY_NODE_DISRUPTION_BUDGETS: 'false' },
    stdio: ['ignore', out, out],
  }));
  const pid = child.pid!;
  const mem = () => {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(s)?.[1] ?? 0) / 1024;
    return { rss: kb('VmRSS'), peak: kb('VmHWM') };
  };
  /** Requests on Slipway's kinds and Events (the bridge's; the bench itself only watches during 2 and 3). */
  const OURS = /^\S+ (cyclenoderequests|cyclenodestatuses|nodemaintenances|events|leases)\b/;
  const ours = (d: Counters) => [...d].filter(([k]) => OURS.test(k) && !k.includes('kube-node-lease')).sort((a, b) => b[1] - a[1]);
  interface Window { name: string; s: number; cpu: number; requests: Array<[string, number]>; rss: number; peak: number }
  const windows: Window[] = [];
  async function measured<T>(name: string, body: () => Promise<T>): Promise<T> {
    const c0 = cpuSeconds({ bridge: pid }).get('bridge') ?? 0;
    const r0 = scrapeRequests();
    const t = performance.now();
    const result = await body();
    const s = (performance.now() - t) / 1000;
    const m = mem();
    windows.push({ name, s, cpu: ((cpuSeconds({ bridge: pid }).get('bridge') ?? 0) - c0) / s, requests: ours(delta(r0, scrapeRequests())), rss: m.rss, peak: m.peak });
    return result;
  }
  const requestId = cycleWorkflowId({ namespace: ns, name: requestName, uid: req!.metadata.uid! });
  const getReq = async () => (await custom.getNamespacedCustomObject({ group, version, plural, namespace: ns, name: requestName })) as CycleNodeRequestObject & { status?: CycleNodeRequestStatus };
  let polls = 0;
  const synced = await measured('start: lead, start or find every workflow, mirror every maintenance', async () => {
    const t = performance.now();
    for (;; polls++) {
      const r = await getReq();
      const l = (await custom.listClusterCustomObject({ ...where })) as { items: Array<{ metadata: { name: string }; status?: NodeMaintenanceStatus }> };
      const mirrored = l.items.filter((o) => o.metadata.name.startsWith(run) && o.status?.workflowId && o.status.selectedNodes !== undefined).length;
      if (r.status?.nodesByPhase && mirrored === MAINTENANCES) return performance.now() - t;
      if (performance.now() - t > 540_000) throw new Error(`bridge not synced after 9 min: ${mirrored}/${MAINTENANCES} maintenances mirrored, request status ${JSON.stringify(r.status?.nodesByPhase)}`);
      await sleep(1000);
    }
  });
  console.log(`${stamp()} bridge synced in ${(synced / 1000).toFixed(1)} s (the bench's own polls in that window: ${polls} GET cyclenoderequests and ${polls} LIST nodemaintenances)`);

  // ---- 2. Idle.
  await measured(`idle ${IDLE_S} s`, () => sleep(IDLE_S * 1000));

  // ---- 3. Batches moving: signal → CycleNodeStatus, and → the request's counts.
  const list = (await custom.listNamespacedCustomObject({ group: S.group, version: S.version, plural: S.plural, namespace: ns, limit: 1 })) as { metadata: { resourceVersion: string } };
  const waiters = new Map<string, { phase: string; done: (t: number) => void }>();
  const watch = await new Watch(kube.config).watch(
    `/apis/${S.group}/${S.version}/namespaces/${ns}/${S.plural}`,
    { resourceVersion: list.metadata.resourceVersion, allowWatchBookmarks: true },
    (_type, o: CycleNodeStatusObject) => {
      const w = o.spec && waiters.get(o.spec.nodeName);
      if (w && o.status?.phase === w.phase) (waiters.delete(o.spec!.nodeName), w.done(performance.now()));
    },
    () => undefined,
  );
  // The request's counts, watched too (a poll would add to the apiserver requests being counted).
  let countWaiter: { phase: string; want: number; done: (t: number) => void } | undefined;
  const requestWatch = await new Watch(kube.config).watch(
    `/apis/${group}/${version}/namespaces/${ns}/${plural}`,
    { fieldSelector: `metadata.name=${requestName}`, allowWatchBookmarks: true },
    (_type, o: CycleNodeRequestObject & { status?: CycleNodeRequestStatus }) => {
      const w = countWaiter;
      if (w && ((o.status?.nodesByPhase as Record<string, number> | undefined)?.[w.phase] ?? 0) >= w.want) (countWaiter = undefined, w.done(performance.now()));
    },
    () => undefined,
  );
  const handle = client.workflow.getHandle(requestId);
  const nodeLag: number[] = [];
  const countLag: number[] = [];
  await measured(`${ROUNDS} rounds of ${BATCH} nodes moved twice`, async () => {
    for (let r = 0; r < ROUNDS; r++) {
      for (const phase of ['DrainingPods', 'Successful'] as const) {
        const a: FleetAdvance = { from: r * BATCH, count: BATCH, phase, message: phase === 'DrainingPods' ? 'Drain not completed yet: 3 pods evicting' : undefined };
        const names = Array.from({ length: BATCH }, (_, i) => fleetNode(a.from + i).nodeName);
        const seen = names.map((n) => new Promise<number>((resolve) => waiters.set(n, { phase, done: resolve })));
        const t = performance.now();
        await handle.signal(fleetAdvanceSignal, a);
        const want = phase === 'Successful' ? (r + 1) * BATCH : BATCH;
        const counted = new Promise<number>((resolve) => (countWaiter = { phase, want, done: resolve }));
        const timeout = sleep(120_000).then(() => 'timeout' as const);
        const done = await Promise.race([Promise.all(seen), timeout]);
        if (done === 'timeout') throw new Error(`round ${r} ${phase}: ${waiters.size} CycleNodeStatus not updated after 120 s`);
        for (const x of done) nodeLag.push(x - t);
        countLag.push((await counted) - t);
        await sleep(500);
      }
    }
  });
  watch.abort();
  requestWatch.abort();

  // ---- Figures.
  console.log(`\n## The bridge at fleet size (${NODES} CycleNodeStatus of one request, ${MAINTENANCES} Idle NodeMaintenances; the bridge in its own process)`);
  for (const w of windows) {
    const total = w.requests.reduce((n, [, v]) => n + v, 0);
    console.log(`${w.name}: ${w.s.toFixed(1)} s; bridge CPU ${w.cpu.toFixed(2)} of a core; RSS ${w.rss.toFixed(0)} MB (peak so far ${w.peak.toFixed(0)} MB); apiserver requests on Slipway's kinds, Events and Leases ${(total / w.s).toFixed(1)}/s (${w.requests.slice(0, 6).map(([k, v]) => `${k} ${(v / w.s).toFixed(1)}/s`).join(', ')})`);
  }
  console.log(`signal → CycleNodeStatus updated (${BATCH} nodes a batch, ${ROUNDS * 2} batches): ${fig(nodeLag)}`);
  console.log(`signal → the request's nodesByPhase counting the batch: ${fig(countLag)}`);
  console.log(`bridge log: ${bridgeLog}`);
} finally {
  await cleanUp();
  worker.shutdown();
  await working;
  await connection.close();
  await client.connection.close();
}
