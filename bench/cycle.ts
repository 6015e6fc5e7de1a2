// Node-cycling benchmark: 50 kwok nodes with 30 pods each, cycled at concurrency 10. Prints wall
// time against the ideal, worker RSS, and the largest workflow history. Figures only.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { AppsV1Api } from '@kubernetes/client-node';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { NODE_GROUP_LABEL } from '../activities/inventory.js';
import { createKube } from '../activities/kube.js';
import { ensureFakeNodeGroup } from '../stack/kwok/nodes.js';
import { connectClient } from '../starter/client.js';
import { temporalSettings } from '../shared/temporal.js';
import { WORKER_NODE_FLAGS } from '../worker/config.js';
import { cycleWorkflowId } from '../workflows/cycle/types.js';
import { cycleNodeRequestWorkflow } from '../workflows/index.js';
import { bareCycle } from './cycle-floor.js';
import { cpuSeconds, delta, formatCpu, scrapeRequests } from './metrics.js';

const NODES = Number(process.env.SLIPWAY_BENCH_NODES ?? 50);
const PODS_PER_NODE = 30;
const CONCURRENCY = 10;
const GRACE_S = 5;

try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // installed by another benchmark in this process
}
const kube = createKube();
const apps = kube.config.makeApiClient(AppsV1Api);
const group = `bench-cycle-${Date.now().toString(36)}`;

await ensureFakeNodeGroup(kube.core, group, NODES, {}, 180_000);
await kube.core.createNamespace({ body: { metadata: { name: group } } });
for (;;) {
  try {
    await kube.core.readNamespacedServiceAccount({ name: 'default', namespace: group });
    break;
  } catch {
    await new Promise((r) => setTimeout(r, 200));
  }
}
await apps.createNamespacedDeployment({
  namespace: group,
  body: {
    metadata: { name: 'app' },
    spec: {
      replicas: NODES * PODS_PER_NODE,
      selector: { matchLabels: { app: 'app' } },
      template: {
        metadata: { labels: { app: 'app' } },
        spec: {
          nodeSelector: { [NODE_GROUP_LABEL]: group },
          terminationGracePeriodSeconds: GRACE_S,
          topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { app: 'app' } } }],
          containers: [{ name: 'c', image: 'registry.invalid/app:1' }],
        },
      },
    },
  },
});
async function appReady(): Promise<void> {
  const deadline = Date.now() + 600_000;
  for (;;) {
    const d = await apps.readNamespacedDeployment({ name: 'app', namespace: group });
    if ((d.status?.readyReplicas ?? 0) >= NODES * PODS_PER_NODE && (d.status?.replicas ?? 0) === NODES * PODS_PER_NODE) return;
    if (Date.now() > deadline) throw new Error('pods not ready in time');
    await new Promise((r) => setTimeout(r, 1000));
  }
}
await appReady();

const settings = { ...temporalSettings(), taskQueue: group };
// The worker as in production: its own process (dist/worker/main.js, prebuilt bundle), sampled from /proc.
// With the production flags (WORKER_NODE_FLAGS); SLIPWAY_WORKER_NODE_OPTIONS replaces them for experiments.
const workerFlags = process.env.SLIPWAY_WORKER_NODE_OPTIONS !== undefined ? process.env.SLIPWAY_WORKER_NODE_OPTIONS.split(' ').filter(Boolean) : [...WORKER_NODE_FLAGS];
const workerProcess = spawn('node', [...workerFlags, 'dist/worker/main.js'], { env: { ...process.env, SLIPWAY_TASK_QUEUE: group }, stdio: ['ignore', 'ignore', 'inherit'] });
const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
await new Promise((r) => setTimeout(r, 3000));
const client = await connectClient(settings);
let peakRss = rssOf(workerProcess.pid!);
const sampler = setInterval(() => {
  try {
    peakRss = Math.max(peakRss, rssOf(workerProcess.pid!));
  } catch {
    // exited
  }
}, 250);

const request = { namespace: group, name: 'bench', uid: group };
const requestsBefore = scrapeRequests();
const cpuBefore = cpuSeconds({ worker: workerProcess.pid!, bench: process.pid });
const started = performance.now();
const result = await client.workflow.execute(cycleNodeRequestWorkflow, {
  taskQueue: group,
  workflowId: cycleWorkflowId(request),
  args: [{ request, spec: { nodeGroupName: group, selector: { matchLabels: { [NODE_GROUP_LABEL]: group } }, cycleSettings: { concurrency: CONCURRENCY } } }],
});
const wall = (performance.now() - started) / 1000;
const cpuAfter = cpuSeconds({ worker: workerProcess.pid!, bench: process.pid });
const requests = [...delta(requestsBefore, scrapeRequests())].sort((a, b) => b[1] - a[1]);
clearInterval(sampler);

let largest = { id: '', events: 0 };
for await (const w of client.workflow.list({ query: `WorkflowId STARTS_WITH '${cycleWorkflowId(request)}'` })) {
  const h = await client.workflow.getHandle(w.workflowId, w.runId).fetchHistory();
  const n = h.events?.length ?? 0;
  if (n > largest.events) largest = { id: w.workflowId, events: n };
}
workerProcess.kill('SIGTERM');

// The floor: the same replacement of the (now new) nodes by a bare script, once the app is whole again.
await appReady();
await new Promise((r) => setTimeout(r, 5000)); // let the controllers settle
const floorCpuBefore = cpuSeconds({ bench: process.pid });
const floor = await bareCycle(kube, group, group, CONCURRENCY);
const floorCpu = formatCpu(floorCpuBefore, cpuSeconds({ bench: process.pid }), floor);

const batches = Math.ceil(NODES / CONCURRENCY);
const ideal = batches * GRACE_S;
console.log(`\n## Node cycling: ${NODES} kwok nodes × ${PODS_PER_NODE} pods, concurrency ${CONCURRENCY}, grace ${GRACE_S} s`);
console.log(`result: ${result.phase}, ${result.nodesCycled}/${result.nodesTotal} nodes cycled`);
console.log(`wall time ${wall.toFixed(1)} s`);
console.log(`  against the floor measured on this machine: a bare script doing the same replacement batch by batch (no Temporal, no checks) took ${floor.toFixed(1)} s → ${(wall / floor).toFixed(2)}× (target ≤ 1.2×)`);
console.log(`  against the theoretical ideal: ${ideal} s (${batches} batches × the ${GRACE_S} s grace period, everything else instant) → ${(wall / ideal).toFixed(2)}×`);
console.log(`worker RSS peak ${(peakRss / 1024 / 1024).toFixed(0)} MB (the worker process: node ${workerFlags.join(' ')} dist/worker/main.js; target ≤ 300 MB)`);
console.log(`Slipway's cycle: ${formatCpu(cpuBefore, cpuAfter, wall)}`);
console.log(`the bare script: ${floorCpu}`);
console.log(`API requests (all clients): ${requests.reduce((n, [, v]) => n + v, 0)}; top: ${requests.slice(0, 10).map(([k, v]) => `${k} ${v}`).join(', ')}`);
console.log(`largest history ${largest.events} events (${largest.id}; target ≤ 10k)`);

await client.connection.close();
await kube.core.deleteNamespace({ name: group });
for (const n of (await kube.core.listNode({ labelSelector: `${NODE_GROUP_LABEL}=${group}` })).items) await kube.core.deleteNode({ name: n.metadata!.name! });
