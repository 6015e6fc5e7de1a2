// Node-cycling benchmark: 50 kwok nodes with 30 pods each, cycled at concurrency 10, against a bare
// script's floor; then the growth from 50 to 200 nodes at a few pods per node. Prints wall time,
// worker RSS, CPU per component and per cycled node, workflow tasks per cycled node (and the
// activities and signals behind them), API requests and the largest workflow history. Figures only.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { AppsV1Api } from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { createKube } from '../kube/client.js';
import { createReadyNamespace } from '../starter/namespace.js';
import { ensureFakeNodeGroup } from '../stack/kwok/nodes.js';
import { connectClient } from '../starter/client.js';
import { temporalSettings } from '../shared/temporal.js';
import { WORKER_NODE_FLAGS } from '../worker/config.js';
import { cycleWorkflowId, parseWorkflowId } from '../workflows/ids.js';
import type { CycleStatus } from '../workflows/cycle/types.js';
import { cycleNodeRequestWorkflow } from '../workflows/index.js';
import { bareCycle } from './cycle-floor.js';
import { cpuSeconds, delta, formatCpu, scrapeRequests, type Counters } from './metrics.js';
import { quietCluster } from './quiet.js';
import { NODE_GROUP_LABEL } from '../api/node-groups.js';

const NODES = Number(process.env.SLIPWAY_BENCH_NODES ?? 50);
const PODS_PER_NODE = 30;
const CONCURRENCY = 10;
const GRACE_S = 5;
/**
 * The growth runs: 50 and 200 nodes with the same few pods per node. 200 × 4 = 800 pods is about
 * half of the main run's 1,500, and each batch moves 40 pods instead of 300, so the 2-core control
 * plane keeps up at both sizes and what grows is what orchestration costs, not the pod churn.
 */
const GROWTH_NODES = [50, 200] as const;
const GROWTH_PODS_PER_NODE = 4;
const GROWTH = process.env.SLIPWAY_BENCH_GROWTH !== '0';

try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // installed by another benchmark in this process
}
const kube = createKube();
const apps = kube.config.makeApiClient(AppsV1Api);
// The worker as in production: its own process (dist/worker/main.js, prebuilt bundle), sampled from /proc.
// With the production flags (WORKER_NODE_FLAGS); SLIPWAY_WORKER_NODE_OPTIONS replaces them for experiments.
const workerFlags = process.env.SLIPWAY_WORKER_NODE_OPTIONS !== undefined ? process.env.SLIPWAY_WORKER_NODE_OPTIONS.split(' ').filter(Boolean) : [...WORKER_NODE_FLAGS];
const rssOf = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;

/** A fresh kwok group of `nodes` nodes, a namespace of the same name, and a Deployment spread `pods` per node, Ready. */
async function setUp(nodes: number, pods: number): Promise<string> {
  const group = `bench-cycle-${Date.now().toString(36)}`;
  await ensureFakeNodeGroup(kube.core, group, nodes, {}, 180_000 + nodes * 1000);
  await createReadyNamespace(kube.core, group);
  await apps.createNamespacedDeployment({
    namespace: group,
    body: {
      metadata: { name: 'app' },
      spec: {
        replicas: nodes * pods,
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
  await appReady(group, nodes * pods);
  return group;
}

async function appReady(group: string, replicas: number): Promise<void> {
  const deadline = Date.now() + 600_000;
  for (;;) {
    const d = await apps.readNamespacedDeployment({ name: 'app', namespace: group });
    if ((d.status?.readyReplicas ?? 0) >= replicas && (d.status?.replicas ?? 0) === replicas) return;
    if (Date.now() > deadline) throw new Error('pods not ready in time');
    await new Promise((r) => setTimeout(r, 1000));
  }
}

async function tearDown(group: string): Promise<void> {
  await kube.core.deleteNamespace({ name: group });
  for (const n of (await kube.core.listNode({ labelSelector: `${NODE_GROUP_LABEL}=${group}` })).items) await kube.core.deleteNode({ name: n.metadata!.name! });
}

interface Run {
  result: CycleStatus;
  wall: number;
  /** CPU seconds by process over the cycle (the stack's, the worker's and this process's). */
  cpu: Map<string, number>;
  peakRss: number;
  requests: Counters;
  tasks: TaskCounts;
}

/** Cycles every node of `group` with a worker of its own (its own process and task queue). */
async function cycle(group: string): Promise<Run> {
  const settings = { ...temporalSettings(), taskQueue: group };
  const workerProcess = spawn('node', [...workerFlags, 'dist/worker/main.js'], { env: { ...process.env, SLIPWAY_TASK_QUEUE: group }, stdio: ['ignore', 'ignore', 'inherit'] });
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
  const requests = delta(requestsBefore, scrapeRequests());
  clearInterval(sampler);
  const cpu = new Map([...cpuAfter].map(([k, v]) => [k, v - (cpuBefore.get(k) ?? 0)]));
  const tasks = await countTasks(client, cycleWorkflowId(request));
  workerProcess.kill('SIGTERM');
  await client.connection.close();
  return { result, wall, cpu, peakRss, requests, tasks };
}

type Kind = 'request' | 'node' | 'drain';
interface Tally {
  workflows: number;
  tasks: number;
  activities: number;
  signals: number;
  events: number;
}
interface TaskCounts {
  byKind: Record<Kind, Tally>;
  largest: { id: string; events: number };
}

/**
 * Workflow tasks (WorkflowTaskCompleted), activities (ActivityTaskScheduled) and signals received
 * (WorkflowExecutionSignaled) over every run of the request's tree: the request with its
 * continued-as-new runs, the node cycles and their drains (all IDs under the request's, workflows/ids.ts).
 */
async function countTasks(client: Client, requestId: string): Promise<TaskCounts> {
  const zero = (): Tally => ({ workflows: 0, tasks: 0, activities: 0, signals: 0, events: 0 });
  const byKind: Record<Kind, Tally> = { request: zero(), node: zero(), drain: zero() };
  let largest = { id: '', events: 0 };
  for await (const w of client.workflow.list({ query: `WorkflowId STARTS_WITH '${requestId}'` })) {
    const p = parseWorkflowId(w.workflowId);
    const kind: Kind = p?.kind === 'nodeCycle' ? 'node' : p?.kind === 'nodeDrain' ? 'drain' : 'request';
    const events = (await client.workflow.getHandle(w.workflowId, w.runId).fetchHistory()).events ?? [];
    const t = byKind[kind];
    t.workflows++;
    t.events += events.length;
    for (const e of events) {
      if (e.workflowTaskCompletedEventAttributes) t.tasks++;
      else if (e.activityTaskScheduledEventAttributes) t.activities++;
      else if (e.workflowExecutionSignaledEventAttributes) t.signals++;
    }
    if (events.length > largest.events) largest = { id: w.workflowId, events: events.length };
  }
  return { byKind, largest };
}

const perNode = (x: number, nodes: number) => (nodes ? x / nodes : NaN).toFixed(2);
/** Worker + Temporal CPU-seconds: what orchestration costs (the control plane's share is the pod churn's). */
const orchestrationCpu = (r: Run) => (r.cpu.get('worker') ?? 0) + (r.cpu.get('temporal') ?? 0);

function costLines(r: Run): string[] {
  const nodes = r.result.nodesCycled;
  const sum = (f: keyof Tally) => Object.values(r.tasks.byKind).reduce((n, t) => n + t[f], 0);
  const kinds = (Object.entries(r.tasks.byKind) as Array<[Kind, Tally]>).filter(([, t]) => t.workflows > 0);
  const split = (f: keyof Tally) => kinds.map(([k, t]) => `${k} ${perNode(t[f], nodes)}`).join(', ');
  return [
    `worker + Temporal CPU ${orchestrationCpu(r).toFixed(1)} s → ${perNode(orchestrationCpu(r), nodes)} CPU-s per cycled node (worker ${perNode(r.cpu.get('worker') ?? 0, nodes)}, Temporal ${perNode(r.cpu.get('temporal') ?? 0, nodes)}; target ≤ 0.25)`,
    `per cycled node, over ${sum('workflows')} workflow runs (${kinds.map(([k, t]) => `${t.workflows} ${k}`).join(', ')}):`,
    `  workflow tasks ${perNode(sum('tasks'), nodes)} (${split('tasks')})`,
    `  activities ${perNode(sum('activities'), nodes)} (${split('activities')})`,
    `  signals received ${perNode(sum('signals'), nodes)} (${split('signals')})`,
    `  history events ${perNode(sum('events'), nodes)} (${split('events')})`,
  ];
}

// The main run, and the floor on the same group.
const group = await setUp(NODES, PODS_PER_NODE);
const main = await cycle(group);
// The floor: the same replacement of the (now new) nodes by a bare script, once the app is whole again.
await appReady(group, NODES * PODS_PER_NODE);
await new Promise((r) => setTimeout(r, 5000)); // let the controllers settle
const floorCpuBefore = cpuSeconds({ bench: process.pid });
const floor = await bareCycle(kube, group, group, CONCURRENCY);
const floorCpu = formatCpu(floorCpuBefore, cpuSeconds({ bench: process.pid }), floor);
await tearDown(group);

const batches = Math.ceil(NODES / CONCURRENCY);
const ideal = batches * GRACE_S;
const requests = [...main.requests].sort((a, b) => b[1] - a[1]);
console.log(`\n## Node cycling: ${NODES} kwok nodes × ${PODS_PER_NODE} pods, concurrency ${CONCURRENCY}, grace ${GRACE_S} s`);
console.log(`result: ${main.result.phase}, ${main.result.nodesCycled}/${main.result.nodesTotal} nodes cycled`);
console.log(`wall time ${main.wall.toFixed(1)} s`);
console.log(`  against the floor measured on this machine: a bare script doing the same replacement batch by batch (no Temporal, no checks) took ${floor.toFixed(1)} s → ${(main.wall / floor).toFixed(2)}× (target ≤ 1.2×)`);
console.log(`  against the theoretical ideal: ${ideal} s (${batches} batches × the ${GRACE_S} s grace period, everything else instant) → ${(main.wall / ideal).toFixed(2)}×`);
console.log(`worker RSS peak ${(main.peakRss / 1024 / 1024).toFixed(0)} MB (the worker process: node ${workerFlags.join(' ')} dist/worker/main.js; target ≤ 300 MB)`);
console.log(`Slipway's cycle: ${formatCpu(new Map(), main.cpu, main.wall)}`);
console.log(`the bare script: ${floorCpu}`);
for (const l of costLines(main)) console.log(l);
console.log(`API requests (all clients): ${requests.reduce((n, [, v]) => n + v, 0)}; top: ${requests.slice(0, 10).map(([k, v]) => `${k} ${v}`).join(', ')}`);
console.log(`largest history ${main.tasks.largest.events} events (${main.tasks.largest.id}; target ≤ 10k)`);

if (GROWTH) {
  // The same cycle at 50 and 200 nodes, each on a quiet cluster.
  const runs: Array<{ nodes: number; run: Run }> = [];
  for (const nodes of GROWTH_NODES) {
    await quietCluster();
    const g = await setUp(nodes, GROWTH_PODS_PER_NODE);
    runs.push({ nodes, run: await cycle(g) });
    await tearDown(g);
  }
  console.log(`\n## Cycle cost growth: ${GROWTH_NODES.join(' → ')} kwok nodes × ${GROWTH_PODS_PER_NODE} pods, concurrency ${CONCURRENCY}, grace ${GRACE_S} s`);
  console.log(`(${GROWTH_PODS_PER_NODE} pods per node: 200 nodes then hold 800 pods and a batch moves 40, which the 2-core control plane keeps up with, so the growth is orchestration's, not the pod churn's)`);
  for (const { nodes, run } of runs) {
    const n = run.result.nodesCycled;
    const tasks = Object.values(run.tasks.byKind).reduce((s, t) => s + t.tasks, 0);
    console.log(
      `${nodes} nodes: ${run.result.phase}, ${n}/${run.result.nodesTotal} cycled; wall ${run.wall.toFixed(1)} s → ${perNode(run.wall, n)} s per node; worker + Temporal CPU ${orchestrationCpu(run).toFixed(1)} s → ${perNode(orchestrationCpu(run), n)} CPU-s per node; ${perNode(tasks, n)} workflow tasks per node; largest history ${run.tasks.largest.events} events`,
    );
  }
  const [a, b] = runs.map(({ run }) => ({ wall: run.wall / run.result.nodesCycled, cpu: orchestrationCpu(run) / run.result.nodesCycled }));
  const growth = (x: number, y: number) => `${y >= x ? '+' : ''}${(((y - x) / x) * 100).toFixed(0)}%`;
  console.log(`growth ${GROWTH_NODES.join(' → ')} nodes: wall per node ${growth(a!.wall, b!.wall)}, CPU per node ${growth(a!.cpu, b!.cpu)} (target: flat within 10%)`);
}
