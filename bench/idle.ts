// What waiting costs (issue 26 §1, "idle costs nothing"). Prints figures; asserts nothing.
//   0. A baseline: the worker running with no workflow, over SLIPWAY_BENCH_BASELINE_S (default the
//      idle window, at most 2 minutes): this process's and Temporal's CPU.
//   1. A NodeMaintenance in Drain holding SLIPWAY_BENCH_HELD (20) kwok nodes without pods (Drained at
//      once), and a drain blocked by a PodDisruptionBudget (one pod, minAvailable 1) on one more node.
//   2. The idle window (SLIPWAY_BENCH_IDLE_S, default 600 s): nothing changes. Printed: history events
//      per held node per hour (its coordinator, its drain and its share of the maintenance), the
//      blocked drain's events per hour, and the CPU of this process (worker) and of Temporal beside
//      the baseline. Targets: ≤ 30 events per held node per hour; Temporal within 10% of idle.
//      The bridge's held-nodes feed (starter/bridge/maintenance/held-nodes.ts) runs in this process (not
//      the whole bridge: its trackers' status queries are the maintenance-bridge bench's): it tells a
//      held node's coordinator when the node changes (#26.1). Printed too: the activities running
//      through the window, by type (each heartbeats: a write on the server).
//   3. Promptness after the idle window (spec: "promptly" is 5 s): an uncordon of a held node → cordoned
//      again (NM-2.5); a node labelled into the selection → cordoned, labelled out → released (NM-2.6).
import { CustomObjectsApi, PolicyV1Api } from '@kubernetes/client-node';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { GROUP, VERSION } from '../api/crd.js';
import { NODE_MAINTENANCE, type NodeMaintenanceSpecInput } from '../api/node-maintenance.js';
import { createKube } from '../kube/client.js';
import { mergePatch } from '../kube/patch.js';
import { API_VERSION } from '../api/names.js';
import { ensureFakeNodeGroup } from '../stack/kwok/nodes.js';
import { createReadyNamespace } from '../starter/namespace.js';
import { connectClient } from '../starter/client.js';
import { temporalSettings } from '../shared/temporal.js';
import { createWorker } from '../worker/worker.js';
import { HeldNodeFeed } from '../starter/bridge/maintenance/held-nodes.js';
import { nodeChangedSignal } from '../workflows/messages.js';
import { maintenanceDrainWorkflowId, maintenanceNodeWorkflowId, maintenanceWorkflowId } from '../workflows/ids.js';
import { drainWorkflow, nodeMaintenanceWorkflow } from '../workflows/index.js';
import { maintenanceStatusQuery, setStageUpdate } from '../workflows/messages.js';
import { cpuSeconds } from './metrics.js';

try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // installed by another benchmark in this process
}

const HELD = Number(process.env.SLIPWAY_BENCH_HELD ?? 20);
const IDLE_S = Number(process.env.SLIPWAY_BENCH_IDLE_S ?? 600);
const BASELINE_S = Number(process.env.SLIPWAY_BENCH_BASELINE_S ?? Math.min(IDLE_S, 120));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const kube = createKube();
const objects = kube.config.makeApiClient(CustomObjectsApi);
const policy = kube.config.makeApiClient(PolicyV1Api);
const group = `bench-idle-${Date.now().toString(36)}`;
const ns = group;
const nodes = await ensureFakeNodeGroup(kube.core, group, HELD + 2);
const held = nodes.slice(0, HELD);
const blockedNode = nodes[HELD]!;
const spare = nodes[HELD + 1]!;
const pool = `${group}-pool`;
const label = (node: string, value: string | null) => kube.core.patchNode({ name: node, body: { metadata: { labels: { [pool]: value } } } }, mergePatch);
for (const n of held) await label(n, 'held');
await createReadyNamespace(kube.core, ns);
await kube.core.createNamespacedPod({ namespace: ns, body: { metadata: { name: 'kept', labels: { app: 'kept' } }, spec: { nodeName: blockedNode, containers: [{ name: 'c', image: 'registry.invalid/bench:1' }] } } });
await policy.createNamespacedPodDisruptionBudget({ namespace: ns, body: { metadata: { name: 'kept' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'kept' } } } } });

const settings = { ...temporalSettings(), taskQueue: group };
const { worker } = await createWorker({ deps: { kube }, settings, prebuiltBundle: true });
const workerRun = worker.run();
const client = await connectClient(settings);
const feedStats = { nodeSignals: 0 };
const feed = new HeldNodeFeed({
  kube,
  tell: (node) => client.workflow.getHandle(maintenanceNodeWorkflowId(node)).signal(nodeChangedSignal).then(() => true, () => false),
  isLeader: () => true,
  stats: feedStats,
  log: (msg) => console.log(`held nodes: ${msg}`),
});
feed.start();

/** Cores used by this process (the worker) and Temporal over `s` seconds from now. */
async function cpuOver(s: number): Promise<{ worker: number; temporal: number }> {
  const a = cpuSeconds({ worker: process.pid });
  await sleep(s * 1000);
  const b = cpuSeconds({ worker: process.pid });
  const d = (k: string) => ((b.get(k) ?? 0) - (a.get(k) ?? 0)) / s;
  return { worker: d('worker'), temporal: d('temporal') };
}

// ---- 0. Baseline: nothing runs.
await sleep(3000);
const baseline = await cpuOver(BASELINE_S);

// ---- 1. The held maintenance and the blocked drain.
const name = `${group}-m`;
const obj = (await objects.createClusterCustomObject({
  group: GROUP,
  version: VERSION,
  plural: NODE_MAINTENANCE.plural,
  body: { apiVersion: API_VERSION, kind: NODE_MAINTENANCE.kind, metadata: { name }, spec: { nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [{ key: pool, operator: 'In', values: ['held'] }] }] }, stage: 'Drain' } },
})) as { metadata: { uid: string; creationTimestamp: string; generation: number }; spec: NodeMaintenanceSpecInput };
const m = await client.workflow.start(nodeMaintenanceWorkflow, {
  taskQueue: group,
  workflowId: maintenanceWorkflowId({ name, uid: obj.metadata.uid }),
  args: [{ name, uid: obj.metadata.uid, createdAt: obj.metadata.creationTimestamp, spec: obj.spec, generation: obj.metadata.generation }],
});
const drainId = `${group}-drain-${blockedNode}`;
const drain = await client.workflow.start(drainWorkflow, { taskQueue: group, workflowId: drainId, args: [{ nodeName: blockedNode }] });
for (const deadline = Date.now() + 120_000; ; await sleep(500)) {
  const s = await m.query(maintenanceStatusQuery);
  if (s.conditions.some((c) => c.type === 'Drained' && c.status === 'True')) break;
  if (Date.now() > deadline) throw new Error(`not Drained in time: ${s.message}`);
}
await sleep(15_000); // the last reports, the drains' ends and the blocked drain's first refusals settle

const heldIds = [m.workflowId, ...held.map(maintenanceNodeWorkflowId), ...held.map(maintenanceDrainWorkflowId)];
async function events(ids: string[]): Promise<number> {
  let n = 0;
  for (const id of ids) n += (await client.workflow.getHandle(id).fetchHistory().catch(() => ({ events: [] }))).events?.length ?? 0;
  return n;
}

/** The activities running now in these workflows, by type (with their heartbeat timeouts). */
async function running(ids: string[]): Promise<string> {
  const byType = new Map<string, number>();
  for (const id of ids) {
    const d = await client.workflow.getHandle(id).describe().catch(() => undefined);
    for (const a of d?.raw.pendingActivities ?? []) {
      const k = `${a.activityType?.name} (heartbeat timeout ${a.activityOptions?.heartbeatTimeout?.seconds ?? '?'} s)`;
      byType.set(k, (byType.get(k) ?? 0) + 1);
    }
  }
  return [...byType].map(([k, n]) => `${n}× ${k}`).join(', ') || 'none';
}

// ---- 2. Nothing changes.
const pending = await running([...heldIds, drainId]);
const signalsBefore = feedStats.nodeSignals;
const before = { held: await events(heldIds), drain: await events([drainId]) };
const idle = await cpuOver(IDLE_S);
const after = { held: await events(heldIds), drain: await events([drainId]) };
const idleSignals = feedStats.nodeSignals - signalsBefore;
const perHour = (n: number) => (n / IDLE_S) * 3600;
const heldPerNode = perHour(after.held - before.held) / HELD;
const drainPerHour = perHour(after.drain - before.drain);
const pct = (x: number, base: number) => (base > 0 ? `${(((x - base) / base) * 100).toFixed(0)}%` : 'n/a');

// ---- 3. Promptness.
/** Seconds from now until `ok` holds for the node (read every 100 ms). */
async function secondsUntil(node: string, ok: (n: Awaited<ReturnType<typeof kube.core.readNode>>) => boolean): Promise<number> {
  const t0 = performance.now();
  for (const deadline = Date.now() + 120_000; Date.now() < deadline; await sleep(100)) if (ok(await kube.core.readNode({ name: node }))) return (performance.now() - t0) / 1000;
  return Infinity;
}
await kube.core.patchNode({ name: held[0]!, body: { spec: { unschedulable: null } } }, mergePatch);
const recordon = await secondsUntil(held[0]!, (n) => n.spec?.unschedulable === true);
await label(spare, 'held');
const joined = await secondsUntil(spare, (n) => n.spec?.unschedulable === true);
await label(spare, null);
const left = await secondsUntil(spare, (n) => !n.spec?.unschedulable);

console.log(`\n## Idle cost (issue 26 §1): a NodeMaintenance holding ${HELD} drained kwok nodes and a drain blocked by a PDB, ${IDLE_S} s with nothing changing`);
console.log(`history events per held node per hour (coordinator + its drain + its share of the maintenance): ${heldPerNode.toFixed(1)} (${after.held - before.held} events over ${IDLE_S} s; target ≤ 30)`);
const drainState = await drain.describe().then((d) => d.status.name, (err: unknown) => String(err));
console.log(`PDB-blocked drain: ${drainPerHour.toFixed(0)} history events per hour (${after.drain - before.drain} over ${IDLE_S} s; ${after.drain} in its history, ${drainState})`);
console.log(`CPU (cores), idle baseline over ${BASELINE_S} s → held over ${IDLE_S} s: Temporal ${baseline.temporal.toFixed(3)} → ${idle.temporal.toFixed(3)} (${pct(idle.temporal, baseline.temporal)}; target within 10%), worker process ${baseline.worker.toFixed(3)} → ${idle.worker.toFixed(3)} (${pct(idle.worker, baseline.worker)})`);
console.log(`activities running through the idle window: ${pending}; nodeChanged signals from the held-nodes feed in it: ${idleSignals}`);
console.log(`promptness after the idle window: uncordon → cordoned again ${recordon.toFixed(2)} s (NM-2.5); labelled in → cordoned ${joined.toFixed(2)} s, labelled out → released ${left.toFixed(2)} s (NM-2.6); "promptly" is 5 s`);
console.log('| figure | value | target |\n|---|---|---|');
console.log(`| events per held node per hour | ${heldPerNode.toFixed(1)} | ≤ 30 |`);
console.log(`| PDB-blocked drain, events per hour | ${drainPerHour.toFixed(0)} | |`);
console.log(`| uncordon reverted / label in → cordoned / label out → released | ${recordon.toFixed(2)} s / ${joined.toFixed(2)} s / ${left.toFixed(2)} s | ≤ 5 s |`);
console.log(`| Temporal CPU, idle → ${HELD} held + blocked drain | ${baseline.temporal.toFixed(3)} → ${idle.temporal.toFixed(3)} cores | within 10% |`);

// ---- Clean up.
await drain.terminate('bench over').catch(() => undefined);
await m.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] }).catch(() => undefined);
await Promise.race([m.result().catch(() => undefined), sleep(60_000)]);
await objects.patchClusterCustomObject({ group: GROUP, version: VERSION, plural: NODE_MAINTENANCE.plural, name, body: { metadata: { finalizers: null } } }, mergePatch).catch(() => undefined);
await objects.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: NODE_MAINTENANCE.plural, name }).catch(() => undefined);
await kube.core.deleteNamespace({ name: ns }).catch(() => undefined);
for (const n of nodes) await kube.core.deleteNode({ name: n }).catch(() => undefined);
await feed.close();
worker.shutdown();
await workerRun;
await client.connection.close();
