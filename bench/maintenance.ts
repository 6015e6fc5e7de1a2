// NodeMaintenance benchmark on the local stack (issue 11 "Performance"). Prints figures; asserts nothing.
// Two intersecting maintenances (A: nodes 0-13, B: nodes 6-19) over 20 kwok nodes × 20 pods, both with
// the same 4-entry plan; each node runs 5 pods of each entry's priority, each entry with its own grace:
//   1. overhead per plan entry over the ideal (the entry's longest grace), per entry from the audit log
//      and overall (Drain start → both Drained, minus the sum of the graces, over 4);
//   2. API requests per evicted pod: the writes the audit log records (evictions, pod and node
//      deletes, node patches, NodeMaintenance writes) by Slipway's client on the benchmark's
//      namespace, nodes and objects; and, reads included, the drain's apiserver_request_total series;
//   3. the largest workflow history among the maintenances, the node coordinators and their drains;
//   4. the hand-over between entries in serial Temporal steps, counted from those histories
//      (bench/history-chain.ts: one entry's last pod leaving → the next entry's first eviction);
//   5. wall times.
// SLIPWAY_BENCH_NM_NODES sets the number of nodes (default 20; A takes the first 70 %, B the last 70 %).
import { AppsV1Api, CustomObjectsApi, SchedulingV1Api } from '@kubernetes/client-node';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { readFile } from 'node:fs/promises';
import { GROUP, VERSION } from '../api/crd.js';
import { NODE_MAINTENANCE, type NodeMaintenanceSpecInput } from '../api/node-maintenance.js';
import { createKube } from '../kube/client.js';
import { createReadyNamespace } from '../starter/namespace.js';
import { ensureFakeNodeGroup } from '../stack/kwok/nodes.js';
import { connectClient } from '../starter/client.js';
import { temporalSettings } from '../shared/temporal.js';
import { createWorker } from '../worker/worker.js';
import { maintenanceDrainWorkflowId, maintenanceNodeWorkflowId, maintenanceWorkflowId } from '../workflows/ids.js';
import { nodeMaintenanceWorkflow } from '../workflows/index.js';
import { maintenanceStatusQuery, setStageUpdate } from '../workflows/messages.js';
import { bareMaintenance } from './maintenance-floor.js';
import { handoverChains, type HistoryEvent } from './history-chain.js';
import { delta, drainRequests, scrapeRequests } from './metrics.js';
import { mergePatch } from '../kube/patch.js';
import { parseWorkflowId } from '../workflows/ids.js';
import { API_VERSION } from '../api/names.js';

try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // installed by another benchmark in this process
}

const NODES = Number(process.env.SLIPWAY_BENCH_NM_NODES ?? 20);
const PODS_PER_ENTRY = 5; // per node: 4 entries × 5 = 20 pods
/** Per plan entry: the plan's podPriority, the pods' priority (just under it) and their grace. */
const ENTRIES = [
  { podPriority: 1000, priority: 500, grace: 1 },
  { podPriority: 2000, priority: 1500, grace: 2 },
  { podPriority: 3000, priority: 2500, grace: 1 },
  { podPriority: 4000, priority: 3500, grace: 2 },
];
const A_NODES = [0, Math.round(NODES * 0.7)];
const B_NODES = [NODES - Math.round(NODES * 0.7), NODES];
/**
 * The hand-over before issue 26 §5, measured on af79d36 by the same count: drain task, signal,
 * coordinator task, signal, maintenance task, register, coordinator task, signal, drain task,
 * classify, drain task. The overhead per entry is that run's (20 nodes, this machine).
 */
const BEFORE = { steps: 11, overheadPerEntry: 4.4 };

const kube = createKube();
const apps = kube.config.makeApiClient(AppsV1Api);
const scheduling = kube.config.makeApiClient(SchedulingV1Api);
const objects = kube.config.makeApiClient(CustomObjectsApi);
const group = `bench-nm-${Date.now().toString(36)}`;
const ns = group;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const tBench = performance.now();

interface AuditEvent {
  verb: string;
  stage: string;
  requestReceivedTimestamp: string;
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  userAgent?: string;
}

async function audit(sinceMs: number): Promise<AuditEvent[]> {
  const text = await readFile(process.env.SLIPWAY_AUDIT_LOG!, 'utf8');
  return text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as AuditEvent)
    .filter((e) => e.stage === 'ResponseComplete' && Date.parse(e.requestReceivedTimestamp) >= sinceMs);
}

const entryOfPod = (name: string | undefined) => Number(/-e(\d)-/.exec(name ?? '')?.[1] ?? -1);

const nodes = await ensureFakeNodeGroup(kube.core, group, NODES);
await createReadyNamespace(kube.core, ns);
const classes = ENTRIES.map((e) => `${group}-p${e.priority}`);
for (const [i, e] of ENTRIES.entries()) await scheduling.createPriorityClass({ body: { metadata: { name: classes[i]! }, value: e.priority } });
const deployments: Array<Promise<unknown>> = [];
for (const [n, node] of nodes.entries()) {
  for (const [i, e] of ENTRIES.entries()) {
    const name = `n${n}-e${i}`;
    deployments.push(
      apps.createNamespacedDeployment({
        namespace: ns,
        body: {
          metadata: { name },
          spec: {
            replicas: PODS_PER_ENTRY,
            selector: { matchLabels: { app: name } },
            template: {
              metadata: { labels: { app: name } },
              spec: {
                nodeSelector: { 'kubernetes.io/hostname': node },
                priorityClassName: classes[i],
                terminationGracePeriodSeconds: e.grace,
                containers: [{ name: 'c', image: 'registry.invalid/bench:1' }],
              },
            },
          },
        },
      }),
    );
  }
}
await Promise.all(deployments);
const total = NODES * ENTRIES.length * PODS_PER_ENTRY;
for (const deadline = Date.now() + 240_000; ; await sleep(1000)) {
  const running = (await kube.core.listNamespacedPod({ namespace: ns })).items.filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp).length;
  if (running >= total) break;
  if (Date.now() > deadline) throw new Error(`only ${running} of ${total} pods Running`);
}
const tPods = performance.now();

const settings = { ...temporalSettings(), taskQueue: group };
const { worker } = await createWorker({ deps: { kube }, settings, prebuiltBundle: true });
const running = worker.run();
const client = await connectClient(settings);

const plan = ENTRIES.map((e) => ({ podType: 'Default' as const, podPriority: e.podPriority }));
const selector = (r: number[]) => ({ nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name' as const, operator: 'In' as const, values: nodes.slice(r[0], r[1]) }] }] });
const names = [`${group}-a`, `${group}-b`];
const before = scrapeRequests();
const t0 = Date.now();
const handles = [];
for (const [name, r] of [[names[0]!, A_NODES], [names[1]!, B_NODES]] as const) {
  const obj = (await objects.createClusterCustomObject({
    group: GROUP,
    version: VERSION,
    plural: NODE_MAINTENANCE.plural,
    body: { apiVersion: API_VERSION, kind: NODE_MAINTENANCE.kind, metadata: { name }, spec: { nodeSelector: selector(r), stage: 'Drain', drainPlan: plan } },
  })) as { metadata: { uid: string; creationTimestamp: string; generation: number }; spec: NodeMaintenanceSpecInput };
  handles.push(
    await client.workflow.start(nodeMaintenanceWorkflow, {
      taskQueue: group,
      workflowId: maintenanceWorkflowId({ name, uid: obj.metadata.uid }),
      args: [{ name, uid: obj.metadata.uid, createdAt: obj.metadata.creationTimestamp, spec: obj.spec, generation: obj.metadata.generation }],
    }),
  );
}
const drainedAt: number[] = [];
let effective = 0;
for (const h of handles) {
  for (const deadline = Date.now() + 300_000; ; await sleep(100)) {
    const s = await h.query(maintenanceStatusQuery);
    effective = s.drainPlan.length;
    if (s.conditions.some((c) => c.type === 'Drained' && c.status === 'True')) break;
    if (Date.now() > deadline) throw new Error(`${h.workflowId} not Drained in time: ${s.message}`);
  }
  drainedAt.push(Date.now());
}
const tDrained = Math.max(...drainedAt);
await sleep(1000); // let closed watches be counted
const reads = drainRequests(delta(before, scrapeRequests()));
for (const h of handles) await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
await Promise.all(handles.map((h) => h.result()));
const tEnd = Date.now();

// ---- Figures.
const events = await audit(t0 - 1000);
const inWindow = events.filter((e) => Date.parse(e.requestReceivedTimestamp) <= tEnd + 1000);
const nodeSet = new Set(nodes);
const ours = (e: AuditEvent) =>
  e.objectRef?.namespace === ns || (e.objectRef?.resource === 'nodes' && nodeSet.has(e.objectRef.name ?? '')) || (e.objectRef?.resource === 'nodemaintenances' && names.includes(e.objectRef.name ?? ''));
const slipway = inWindow.filter((e) => ours(e) && /node-fetch/.test(e.userAgent ?? ''));
const accepted = slipway.filter((e) => e.objectRef?.subresource === 'eviction' && e.responseStatus?.code === 201);
const evictedPods = new Set(accepted.map((e) => e.objectRef!.name!));
const byKind = new Map<string, number>();
for (const e of slipway) {
  const k = `${e.verb} ${e.objectRef?.resource}${e.objectRef?.subresource ? `/${e.objectRef.subresource}` : ''} ${e.responseStatus?.code}`;
  byKind.set(k, (byKind.get(k) ?? 0) + 1);
}

// Per entry: from the previous entry's last pod deletion (Drain start for the first) to this entry's.
const kwokDeletes = inWindow.filter((e) => e.verb === 'delete' && e.objectRef?.resource === 'pods' && !e.objectRef.subresource && e.objectRef.namespace === ns && /kwok/.test(e.userAgent ?? ''));
const perEntry: Array<{ span: number; overhead: number; evicted: number }> = [];
let prev = t0;
for (const [i, e] of ENTRIES.entries()) {
  const gone = kwokDeletes.filter((d) => entryOfPod(d.objectRef?.name) === i).map((d) => Date.parse(d.requestReceivedTimestamp));
  const last = Math.max(...gone);
  perEntry.push({ span: (last - prev) / 1000, overhead: (last - prev) / 1000 - e.grace, evicted: gone.length });
  prev = last;
}
const ideal = ENTRIES.reduce((s, e) => s + e.grace, 0);
// NM-1.5: the effective plan appends the default entries above the written ones; they match no pod here.
const tail = (tDrained - prev) / 1000;
const overall = ((tDrained - t0) / 1000 - ideal) / ENTRIES.length;

const ids = [
  ...handles.map((h) => h.workflowId),
  ...nodes.map(maintenanceNodeWorkflowId),
  ...nodes.map(maintenanceDrainWorkflowId),
];
const sizes: Array<[string, number]> = [];
const histories = new Map<string, HistoryEvent[]>();
for (const id of ids) {
  const hist = await client.workflow.getHandle(id).fetchHistory().catch(() => undefined);
  if (!hist) continue; // a node no drain ran on
  sizes.push([id, hist.events?.length ?? 0]);
  histories.set(id, (hist.events ?? []) as unknown as HistoryEvent[]);
}
const chains = handoverChains(histories);
const steps = chains.map((c) => c.steps).sort((x, y) => x - y);
const median = steps[Math.floor(steps.length / 2)] ?? NaN;
const longest = chains.reduce<(typeof chains)[number] | undefined>((a, c) => (!a || c.steps > a.steps ? c : a), undefined);
sizes.sort((x, y) => y[1] - x[1]);

// The floor: once Complete has uncordoned the nodes and every pod runs again, the same plan by a bare script.
for (const deadline = Date.now() + 240_000; ; await sleep(1000)) {
  const running = (await kube.core.listNamespacedPod({ namespace: ns })).items.filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp).length;
  if (running >= total) break;
  if (Date.now() > deadline) throw new Error(`floor: only ${running} of ${total} pods Running again`);
}
const floor = await bareMaintenance(kube, nodes, ns, ENTRIES.map((e) => ({ podPriority: e.podPriority })));
const floorOverhead = floor.map((span, i) => span - ENTRIES[i]!.grace);

console.log(`\n## NodeMaintenance: two intersecting maintenances (A: nodes ${A_NODES[0]}-${A_NODES[1]! - 1}, B: nodes ${B_NODES[0]}-${B_NODES[1]! - 1}) over ${NODES} kwok nodes × ${ENTRIES.length * PODS_PER_ENTRY} pods, 4-entry plan`);
console.log(`plan ${plan.map((p) => `Default≤${p.podPriority}`).join(', ')}; per node ${PODS_PER_ENTRY} pods per entry, graces ${ENTRIES.map((e) => `${e.grace} s`).join(', ')} (ideal ${ideal} s)`);
for (const [i, x] of perEntry.entries()) console.log(`  entry ${i + 1}: ${x.evicted} pods deleted, ${x.span.toFixed(2)} s from the previous entry's last deletion, overhead ${x.overhead.toFixed(2)} s over its grace ${ENTRIES[i]!.grace} s`);
console.log(`  then ${effective - ENTRIES.length} entries of the effective plan (${effective} entries, NM-1.5) that match no pod: ${tail.toFixed(2)} s from the last pod deletion to both Drained, ${(tail / (effective - ENTRIES.length)).toFixed(2)} s per empty entry`);
console.log(`floor (bare script, same nodes, pods and barrier; bench/maintenance-floor.ts): ${floor.map((x, i) => `entry ${i + 1} ${x.toFixed(2)} s (overhead ${floorOverhead[i]!.toFixed(2)} s)`).join(', ')}`);
console.log(`Drain start → both Drained: ${((tDrained - t0) / 1000).toFixed(2)} s (A ${((drainedAt[0]! - t0) / 1000).toFixed(2)} s, B ${((drainedAt[1]! - t0) / 1000).toFixed(2)} s); overhead per entry over the ideal ${overall.toFixed(3)} s (includes cordoning and Drained reporting; kwok stores grace deadlines to the whole second)`);
console.log(`\n## API requests per evicted pod`);
console.log(`audit log (writes only: evictions, pod/node deletes, node patches, NodeMaintenance writes) by Slipway's client (node-fetch) on the benchmark's namespace, nodes and objects, Drain start → Complete done:`);
for (const [k, v] of [...byKind].sort()) console.log(`  ${k.padEnd(40)} ${v}`);
console.log(`  = ${slipway.length} writes for ${evictedPods.size} evicted pods: ${(slipway.length / evictedPods.size).toFixed(2)} per evicted pod`);
console.log(`apiserver_request_total, the drain's series (reads included, Drain start → Drained):`);
for (const [k, v] of reads.series) console.log(`  ${k.padEnd(40)} ${v}`);
console.log(`  = ${reads.total} requests: ${(reads.total / evictedPods.size).toFixed(2)} per evicted pod`);
console.log(`\n## The hand-over between plan entries (serial Temporal steps, from the histories; bench/history-chain.ts)`);
console.log(`${chains.length} hand-overs (one per node per entry after the first): min ${steps[0]}, median ${median}, max ${steps.at(-1)} steps; before (af79d36) ${BEFORE.steps}`);
if (longest) console.log(`  the longest: ${longest.path.join(' ← ')}`);
console.log(`\n## Workflow histories (events; the current run of each)`);
for (const [id, n] of sizes.slice(0, 3)) console.log(`  ${id.padEnd(50)} ${n}`);
console.log(`  maintenances ${sizes.filter(([id]) => parseWorkflowId(id)?.kind === 'maintenance').map(([, n]) => n).join(', ')}; coordinators max ${Math.max(...sizes.filter(([id]) => parseWorkflowId(id)?.kind === 'maintenanceNode').map(([, n]) => n))}; drains max ${Math.max(...sizes.filter(([id]) => parseWorkflowId(id)?.kind === 'maintenanceDrain').map(([, n]) => n))}`);
const tAll = (performance.now() - tBench) / 1000;
console.log('\n## Summary');
console.log('| figure | value | target |\n|---|---|---|');
console.log(`| overhead per plan entry over the ideal (max of the 4 written entries / overall, over 4) | ${Math.max(...perEntry.map((x) => x.overhead)).toFixed(2)} s / ${overall.toFixed(2)} s | ≤ 1 s |`);
console.log(`| serial steps from an entry's last pod leaving to the next entry's first eviction (max / median; from the histories) | ${steps.at(-1)} / ${median} (before ${BEFORE.steps}) | ≤ 5 |`);
console.log(`| overhead per plan entry, mean of the written entries (before, af79d36 at 20 nodes: ${BEFORE.overheadPerEntry} s) | ${(perEntry.reduce((a, x) => a + x.overhead, 0) / perEntry.length).toFixed(2)} s | ≤ 2 s |`);
console.log(`| the same, bare-script floor on this machine (max / mean) | ${Math.max(...floorOverhead).toFixed(2)} s / ${(floorOverhead.reduce((a, b) => a + b, 0) / floorOverhead.length).toFixed(2)} s | |`);
console.log(`| Slipway over the floor per entry (mean) | ${(perEntry.reduce((a, x, i) => a + x.overhead - floorOverhead[i]!, 0) / perEntry.length).toFixed(2)} s | |`);
console.log(`| time per empty default entry after the written plan | ${(tail / (effective - ENTRIES.length)).toFixed(2)} s × ${effective - ENTRIES.length} | (A3: one evaluation) |`);
console.log(`| API requests per evicted pod (audited writes / drain series incl. reads) | ${(slipway.length / evictedPods.size).toFixed(2)} / ${(reads.total / evictedPods.size).toFixed(2)} | ≤ 3 |`);
console.log(`| largest history | ${sizes[0]![1]} events (${sizes[0]![0]}) | ≤ 10,000 |`);
console.log(`| wall time: pods up / Drain → Drained / Drain → Complete done / whole benchmark | ${((tPods - tBench) / 1000).toFixed(1)} s / ${((tDrained - t0) / 1000).toFixed(1)} s / ${((tEnd - t0) / 1000).toFixed(1)} s / ${tAll.toFixed(1)} s | |`);

// ---- Clean up.
for (const name of names) {
  const where = { group: GROUP, version: VERSION, plural: NODE_MAINTENANCE.plural, name };
  await objects.patchClusterCustomObject({ ...where, body: { metadata: { finalizers: null } } }, mergePatch).catch(() => undefined);
  await objects.deleteClusterCustomObject(where).catch(() => undefined);
}
await kube.core.deleteNamespace({ name: ns });
for (const name of classes) await scheduling.deletePriorityClass({ name }).catch(() => undefined);
for (const n of nodes) await kube.core.deleteNode({ name: n }).catch(() => undefined);
worker.shutdown();
await running;
await client.connection.close();
