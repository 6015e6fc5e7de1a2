// Rolling NodeMaintenance benchmark on the local stack (issue 27 "Performance"). Prints figures; asserts nothing.
// One maintenance with spec.rollout over SLIPWAY_BENCH_RO_NODES (50) kwok nodes, SLIPWAY_BENCH_RO_PODS (2)
// pods each, maxUnavailable SLIPWAY_BENCH_RO_MAX (5), completion by annotation, and instant work: the
// bench plays the admin's tooling, reading the maintenance's status (what `kubectl get snm -o yaml`
// shows; here the workflow's status query, there is no bridge) and annotating each node
// `maintenance.slipway.dev/done: <name>` as soon as it is AwaitingWork. Printed:
//   1. completion → next cordon: from the moment the bench's annotation write returned to the next
//      node's cordon seen by a Node watch, p50/p99/max. Each completion frees one place under
//      maxUnavailable, so the k-th completion is paired with the (maxUnavailable + k)-th cordon.
//      Broken down from the maintenance's history: mark → the completion watch's answer recorded,
//      → the release acknowledged (the coordinator's released report), → the next node's register
//      sent, → its cordon seen;
//   2. the largest history of the maintenance (every run: continue-as-new) and of any coordinator
//      and drain;
//   3. wall: Drain start → rollout Done, → Complete done.
import { CustomObjectsApi, Watch, AppsV1Api, type V1Node } from '@kubernetes/client-node';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { Client } from '@temporalio/client';
import { GROUP, VERSION } from '../api/crd.js';
import { NODE_MAINTENANCE, type NodeMaintenanceSpecInput } from '../api/node-maintenance.js';
import { ROLLOUT_DONE_ANNOTATION } from '../api/rollout.js';
import { API_VERSION } from '../api/names.js';
import { NODE_GROUP_LABEL } from '../api/node-groups.js';
import { createKube } from '../kube/client.js';
import { mergePatch } from '../kube/patch.js';
import { createReadyNamespace } from '../starter/namespace.js';
import { ensureFakeNodeGroup } from '../stack/kwok/nodes.js';
import { connectClient } from '../starter/client.js';
import { temporalSettings } from '../shared/temporal.js';
import { createWorker } from '../worker/worker.js';
import { maintenanceDrainWorkflowId, maintenanceNodeWorkflowId, maintenanceWorkflowId, parseWorkflowId } from '../workflows/ids.js';
import { nodeMaintenanceWorkflow } from '../workflows/index.js';
import { maintenanceStatusQuery, setStageUpdate } from '../workflows/messages.js';
import { normalize, type HistoryEvent } from './history-chain.js';

try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // installed by another benchmark in this process
}

const NODES = Number(process.env.SLIPWAY_BENCH_RO_NODES ?? 50);
const PODS = Number(process.env.SLIPWAY_BENCH_RO_PODS ?? 2);
const MAX = Number(process.env.SLIPWAY_BENCH_RO_MAX ?? 5);
const POLL_MS = 100;

const kube = createKube();
const apps = kube.config.makeApiClient(AppsV1Api);
const objects = kube.config.makeApiClient(CustomObjectsApi);
const group = `bench-ro-${Date.now().toString(36)}`;
const ns = group;
const name = `${group}-m`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const tBench = performance.now();

const nodes = await ensureFakeNodeGroup(kube.core, group, NODES);
await createReadyNamespace(kube.core, ns);
await Promise.all(
  nodes.map((node, i) =>
    apps.createNamespacedDeployment({
      namespace: ns,
      body: {
        metadata: { name: `n${i}` },
        spec: {
          replicas: PODS,
          selector: { matchLabels: { app: `n${i}` } },
          template: {
            metadata: { labels: { app: `n${i}` } },
            spec: { nodeSelector: { 'kubernetes.io/hostname': node }, terminationGracePeriodSeconds: 0, containers: [{ name: 'c', image: 'registry.invalid/bench:1' }] },
          },
        },
      },
    }),
  ),
);
for (const deadline = Date.now() + 240_000; ; await sleep(1000)) {
  const running = (await kube.core.listNamespacedPod({ namespace: ns })).items.filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp).length;
  if (running >= NODES * PODS) break;
  if (Date.now() > deadline) throw new Error(`only ${running} of ${NODES * PODS} pods Running`);
}

// The Node watch: when each node was first cordoned (wall clock, ms).
const cordonedAt = new Map<string, number>();
const maxCordoned = { now: 0, peak: 0 };
const cordoned = new Set<string>();
const abort = await new Watch(kube.config).watch(
  '/api/v1/nodes',
  { labelSelector: `${NODE_GROUP_LABEL}=${group}` },
  (_type, n: V1Node) => {
    const node = n.metadata!.name!;
    if (n.spec?.unschedulable) {
      if (!cordonedAt.has(node)) cordonedAt.set(node, Date.now());
      cordoned.add(node);
    } else cordoned.delete(node);
    maxCordoned.peak = Math.max(maxCordoned.peak, cordoned.size);
  },
  (err: unknown) => {
    if (err) console.log(`node watch ended: ${String(err)}: later figures may be late`);
  },
);

const settings = { ...temporalSettings(), taskQueue: group };
const { worker } = await createWorker({ deps: { kube }, settings, prebuiltBundle: true });
const running = worker.run();
const client = await connectClient(settings);

const spec: NodeMaintenanceSpecInput = {
  nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [{ key: NODE_GROUP_LABEL, operator: 'In', values: [group] }] }] },
  stage: 'Drain',
  reason: 'bench: rolling kernel upgrade',
  rollout: { maxUnavailable: MAX, completion: { annotation: true } },
};
const obj = (await objects.createClusterCustomObject({
  group: GROUP,
  version: VERSION,
  plural: NODE_MAINTENANCE.plural,
  body: { apiVersion: API_VERSION, kind: NODE_MAINTENANCE.kind, metadata: { name }, spec },
})) as { metadata: { uid: string; creationTimestamp: string; generation: number }; spec: NodeMaintenanceSpecInput };
const t0 = Date.now();
const h = await client.workflow.start(nodeMaintenanceWorkflow, {
  taskQueue: group,
  workflowId: maintenanceWorkflowId({ name, uid: obj.metadata.uid }),
  args: [{ name, uid: obj.metadata.uid, createdAt: obj.metadata.creationTimestamp, spec: obj.spec, generation: obj.metadata.generation }],
});

// The admin's tooling: each node AwaitingWork is annotated done at once.
const markedAt = new Map<string, number>();
const marking: Array<Promise<unknown>> = [];
let tDone = 0;
for (const deadline = Date.now() + 30 * 60_000; ; await sleep(POLL_MS)) {
  const s = await h.query(maintenanceStatusQuery);
  for (const ns of s.nodeStatuses) {
    const node = ns.nodeRef.name;
    if (ns.phase !== 'AwaitingWork' || markedAt.has(node)) continue;
    markedAt.set(node, 0);
    marking.push(
      kube.core.patchNode({ name: node, body: { metadata: { annotations: { [ROLLOUT_DONE_ANNOTATION]: name } } } }, mergePatch).then(() => markedAt.set(node, Date.now())),
    );
  }
  if (s.rollout?.phase === 'Done' || s.rollout?.phase === 'Stopped') {
    tDone = Date.now();
    if (s.rollout.phase === 'Stopped') console.log(`rollout stopped: ${s.rollout.message}`);
    break;
  }
  if (Date.now() > deadline) throw new Error(`rollout not Done in time: ${s.message}`);
}
await Promise.all(marking);
await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
await h.result();
const tEnd = Date.now();
await sleep(500);
abort.abort();

// ---- 1. Completion → next cordon.
const pct = (xs: number[], p: number) => xs[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)] ?? NaN;
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const marks = [...markedAt].sort((a, b) => a[1] - b[1]);
const cordons = [...cordonedAt].sort((a, b) => a[1] - b[1]);
const pairs = marks.map(([node, at], k) => ({ node, at, next: cordons[MAX + k] })).filter((p): p is { node: string; at: number; next: [string, number] } => !!p.next);
const gaps = sorted(pairs.map((p) => p.next[1] - p.at));

const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
console.log(`\n## Rolling NodeMaintenance: ${NODES} kwok nodes × ${PODS} pods, maxUnavailable ${MAX}, completion by annotation (instant work)`);
console.log(`the bench plays the admin's tooling: it reads the status every ${POLL_MS} ms and annotates each AwaitingWork node ${ROLLOUT_DONE_ANNOTATION}: <name>`);
console.log(`completion (annotation written) → next node's cordon (Node watch), ${gaps.length} hand-overs: p50 ${s(pct(gaps, 50))}, p99 ${s(pct(gaps, 99))}, max ${s(gaps.at(-1) ?? NaN)} (target ≤ 1 s)`);
console.log(`most nodes cordoned at once (Node watch): ${maxCordoned.peak} (maxUnavailable ${MAX}); wall: Drain start → rollout Done ${s(tDone - t0)}, → Complete done ${s(tEnd - t0)}`);

// The breakdown, from the maintenance's histories (every run).
async function runsOf(c: Client, id: string): Promise<HistoryEvent[][]> {
  const runs: Array<{ runId: string; at: number }> = [];
  for await (const w of c.workflow.list({ query: `WorkflowId = '${id}'` })) runs.push({ runId: w.runId, at: w.startTime.getTime() });
  const out: HistoryEvent[][] = [];
  for (const r of runs.sort((a, b) => a.at - b.at)) out.push(((await c.workflow.getHandle(id, r.runId).fetchHistory()).events ?? []) as unknown as HistoryEvent[]);
  return out; // oldest run first
}
const decode = (payloads: any): any => {
  try {
    return JSON.parse(Buffer.from(payloads?.payloads?.[0]?.data ?? []).toString('utf8'));
  } catch {
    return undefined;
  }
};
/** The node a coordinator's workflow ID names ('' for any other). */
const nodeOf = (id: unknown): string => {
  const p = parseWorkflowId(String(id ?? ''));
  return p?.kind === 'maintenanceNode' ? p.node : '';
};
const mRuns = await runsOf(client, h.workflowId);
const answered = new Map<string, number>(); // node → the completion watch's answer recorded
const acked = new Map<string, number>(); // node → its released report received
const registered = new Map<string, number>(); // node → first register sent (signal or start)
for (const run of mRuns) {
  const evs = normalize(run);
  const scheduled = new Map(evs.filter((e) => e.kind === 'activityTaskScheduled').map((e) => [e.id, e]));
  for (const e of evs) {
    if (e.kind === 'activityTaskCompleted') {
      const s = scheduled.get(Number(String(e.a.scheduledEventId)));
      if (s?.a.activityType?.name !== 'watchRolloutNode') continue;
      const done = decode(e.a.result);
      const node = decode(s.a.input)?.node;
      if (done?.done && node && !answered.has(node)) answered.set(node, e.ms);
    } else if (e.kind === 'workflowExecutionSignaled' && e.a.signalName === 'nodeReport') {
      const r = decode(e.a.input);
      if (r?.released && !acked.has(r.node)) acked.set(r.node, e.ms);
    } else if (e.kind === 'signalExternalWorkflowExecutionInitiated' && e.a.signalName === 'register') {
      const node = nodeOf(e.a.workflowExecution?.workflowId);
      if (!registered.has(node)) registered.set(node, e.ms);
    } else if (e.kind === 'startChildWorkflowExecutionInitiated') {
      const node = nodeOf(e.a.workflowId);
      if (!registered.has(node)) registered.set(node, e.ms);
    }
  }
}
const segments = { answer: [] as number[], ack: [] as number[], register: [] as number[], cordon: [] as number[] };
for (const p of pairs) {
  const [a, k, r, c] = [answered.get(p.node), acked.get(p.node), registered.get(p.next[0]), p.next[1]];
  if (a === undefined || k === undefined || r === undefined) continue;
  segments.answer.push(a - p.at);
  segments.ack.push(k - a);
  segments.register.push(r - k);
  segments.cordon.push(c - r);
}

// ---- 2. Histories.
const sizes: Array<[string, number]> = mRuns.map((r, i) => [`${h.workflowId} (run ${i + 1} of ${mRuns.length})`, r.length]);
for (const id of [...nodes.map(maintenanceNodeWorkflowId), ...nodes.map(maintenanceDrainWorkflowId)]) {
  for (const [i, r] of (await runsOf(client, id).catch(() => [])).entries()) sizes.push([`${id}${i ? ` (run ${i + 1})` : ''}`, r.length]);
}
const largest = (kind: (id: string) => boolean) => sizes.filter(([id]) => kind(id)).reduce<[string, number]>((a, x) => (x[1] > a[1] ? x : a), ['', 0]);
const mLargest = largest((id) => id.startsWith(h.workflowId));
const cLargest = largest((id) => parseWorkflowId(id.split(' ')[0]!)?.kind === 'maintenanceNode');
const dLargest = largest((id) => parseWorkflowId(id.split(' ')[0]!)?.kind === 'maintenanceDrain');

const p50p99 = (xs: number[]) => (xs.length ? `${s(pct(sorted(xs), 50))} / ${s(pct(sorted(xs), 99))}` : 'n/a');
console.log(`  where it goes (p50 / p99 of each leg, ${segments.answer.length} hand-overs; from the maintenance's history and the Node watch):`);
console.log(`    annotation written → the completion watch's answer recorded        ${p50p99(segments.answer)}`);
console.log(`    → the node's release acknowledged (its coordinator's report)       ${p50p99(segments.ack)}`);
console.log(`    → the next node's register sent                                    ${p50p99(segments.register)}`);
console.log(`    → the next node cordoned (coordinator: budget slot, cordon write)  ${p50p99(segments.cordon)}`);
console.log(`\n## Workflow histories (events per run)`);
console.log(`  maintenance: ${mRuns.length} run(s), largest ${mLargest[1]} (${mRuns.map((r) => r.length).join(', ')})`);
console.log(`  coordinators: largest ${cLargest[1]} (${cLargest[0]}); drains: largest ${dLargest[1]} (${dLargest[0]})`);
console.log('\n## Summary');
console.log('| figure | value | target |\n|---|---|---|');
console.log(`| completion → next cordon, p50 / p99 (max) | ${s(pct(gaps, 50))} / ${s(pct(gaps, 99))} (${s(gaps.at(-1) ?? NaN)}) | ≤ 1 s |`);
console.log(`| largest history: maintenance (runs) / coordinator / drain | ${mLargest[1]} (${mRuns.length}) / ${cLargest[1]} / ${dLargest[1]} | ≤ 10,000 |`);
console.log(`| wall: Drain start → rollout Done / → Complete done / whole benchmark | ${s(tDone - t0)} / ${s(tEnd - t0)} / ${((performance.now() - tBench) / 1000).toFixed(1)} s | |`);

// ---- Clean up.
const where = { group: GROUP, version: VERSION, plural: NODE_MAINTENANCE.plural, name };
await objects.patchClusterCustomObject({ ...where, body: { metadata: { finalizers: null } } }, mergePatch).catch(() => undefined);
await objects.deleteClusterCustomObject(where).catch(() => undefined);
await kube.core.deleteNamespace({ name: ns }).catch(() => undefined);
for (const n of nodes) await kube.core.deleteNode({ name: n }).catch(() => undefined);
worker.shutdown();
await running;
await client.connection.close();
