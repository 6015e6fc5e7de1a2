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
import { temporalSettings } from '../worker/config.js';
import { cycleWorkflowId } from '../workflows/cycle/types.js';
import { cycleNodeRequestWorkflow } from '../workflows/index.js';

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
const deadline = Date.now() + 600_000;
for (;;) {
  const d = await apps.readNamespacedDeployment({ name: 'app', namespace: group });
  if ((d.status?.readyReplicas ?? 0) >= NODES * PODS_PER_NODE) break;
  if (Date.now() > deadline) throw new Error('pods not ready in time');
  await new Promise((r) => setTimeout(r, 1000));
}

const settings = { ...temporalSettings(), taskQueue: group };
// The worker as in production: its own process (dist/worker/main.js, prebuilt bundle), sampled from /proc.
const workerProcess = spawn('node', ['dist/worker/main.js'], { env: { ...process.env, SLIPWAY_TASK_QUEUE: group, NODE_OPTIONS: process.env.SLIPWAY_WORKER_NODE_OPTIONS ?? '' }, stdio: ['ignore', 'ignore', 'inherit'] });
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
const started = performance.now();
const result = await client.workflow.execute(cycleNodeRequestWorkflow, {
  taskQueue: group,
  workflowId: cycleWorkflowId(request),
  args: [{ request, spec: { nodeGroupName: group, selector: { matchLabels: { [NODE_GROUP_LABEL]: group } }, cycleSettings: { concurrency: CONCURRENCY } } }],
});
const wall = (performance.now() - started) / 1000;
clearInterval(sampler);

let largest = { id: '', events: 0 };
for await (const w of client.workflow.list({ query: `WorkflowId STARTS_WITH '${cycleWorkflowId(request)}'` })) {
  const h = await client.workflow.getHandle(w.workflowId, w.runId).fetchHistory();
  const n = h.events?.length ?? 0;
  if (n > largest.events) largest = { id: w.workflowId, events: n };
}
const batches = Math.ceil(NODES / CONCURRENCY);
const ideal = batches * GRACE_S;
console.log(`\n## Node cycling: ${NODES} kwok nodes × ${PODS_PER_NODE} pods, concurrency ${CONCURRENCY}, grace ${GRACE_S} s`);
console.log(`result: ${result.phase}, ${result.nodesCycled}/${result.nodesTotal} nodes cycled`);
console.log(`wall time ${wall.toFixed(1)} s; ideal ${ideal} s (${batches} batches × the ${GRACE_S} s grace period, everything else instant) → ${(wall / ideal).toFixed(2)}× ideal (target ≤ 1.2×)`);
console.log(`worker RSS peak ${(peakRss / 1024 / 1024).toFixed(0)} MB (the worker process, dist/worker/main.js; target ≤ 300 MB)`);
console.log(`largest history ${largest.events} events (${largest.id}; target ≤ 10k)`);

workerProcess.kill('SIGTERM');
await client.connection.close();
await kube.core.deleteNamespace({ name: group });
for (const n of (await kube.core.listNode({ labelSelector: `${NODE_GROUP_LABEL}=${group}` })).items) await kube.core.deleteNode({ name: n.metadata!.name! });
