// Bridge lag for NodeMaintenance (issue 11 "Performance"): created → workflow running, and a
// spec.stage edit → acted on (p50 / p99 / max), with 500 objects in flight (issue 10 §3b), and what
// the status mirror costs while nothing changes: the bridge's requests per second to Temporal (counted
// on its own connection) and the CPU of this process (worker + bridge) and of Temporal over an idle
// window. Prints figures; asserts nothing. The bridge runs in
// this process as in production (leader election, its own Lease and task queue) with a real worker:
// the real maintenance workflow and node coordinators, so "acted on" is the node itself.
//   1. N maintenances created one at a time, Idle (touches nothing): create call → describe says
//      Running (as bench/bridge.ts for requests), and → status.workflowId mirrored by the bridge.
//      They stay running while the next are created (N Idle maintenances tracked at once).
//   0. A baseline (SLIPWAY_BENCH_BASELINE_S, default the idle window): the worker and the bridge
//      running with no object, nothing else: the CPU of this process and of Temporal (issue 26 §1).
//   1b. An idle window (SLIPWAY_BENCH_IDLE_S, default 60 s: what one Idle preview refresh of each cost before #26.1): nothing
//      changes; the bridge's gRPC calls, its trackers' counts and CPU are measured, beside the baseline.
//   2. The first K of them select one kwok node each: spec.stage Idle → Cordon, one at a time:
//      patch → the node cordoned (spec.unschedulable and the state label, written together by its
//      coordinator), and → the Cordon stage mirrored into status. Then, a second later, Cordon →
//      Complete: patch → the node uncordoned (label gone). Repeated over R rounds, each with a new Idle maintenance per node
//      (created and measured as in 1), so the p99 of K × R edits is not just their max.
// Then every object is deleted and the bench waits until they are gone (finalizers released) and no
// node is left cordoned. Nodes and objects are watched, not polled (a poll every 10 ms loads the
// apiserver being measured); Temporal's describe is polled as in bench/bridge.ts. The Cordon edits
// are broken down from the two workflows' histories (SLIPWAY_BENCH_TRACE=1: the slowest in full).
import { CustomObjectsApi, Watch, type KubernetesObject, type V1Node } from '@kubernetes/client-node';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { GROUP, VERSION } from '../api/crd.js';
import { MAINTENANCE_STATE_LABEL, NODE_MAINTENANCE, type NodeMaintenanceStatus } from '../api/node-maintenance.js';
import { apiStatus, createKube } from '../kube/client.js';
import { ensureFakeNodeGroup } from '../stack/kwok/nodes.js';
import { startBridge } from '../starter/bridge/main.js';
import { connectClient } from '../starter/client.js';
import { temporalSettings } from '../shared/temporal.js';
import { createWorker } from '../worker/worker.js';
import { maintenanceNodeWorkflowId, maintenanceWorkflowId } from '../workflows/ids.js';
import { cpuSeconds, formatCpu } from './metrics.js';
import { mergePatch } from '../kube/patch.js';
import { NODE_GROUP_LABEL } from '../api/node-groups.js';
import { API_VERSION } from '../api/names.js';

try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // installed by another benchmark in this process
}
const MAINTENANCES = Number(process.env.SLIPWAY_BENCH_MAINTENANCES ?? 500);
/** The idle window: as long as the Idle maintenances' own refresh was before #26.1 (60 s; now they have none). */
const IDLE_S = Number(process.env.SLIPWAY_BENCH_IDLE_S ?? 60);
const BASELINE_S = Number(process.env.SLIPWAY_BENCH_BASELINE_S ?? IDLE_S);
const NODES = Math.min(MAINTENANCES, Number(process.env.SLIPWAY_BENCH_NODES ?? 20));
/** Rounds of stage edits over the NODES nodes (a new maintenance per node each round): 5 × 20 = 100 samples, so p99 is not the max. */
const ROUNDS = Number(process.env.SLIPWAY_BENCH_ROUNDS ?? 5);
const POLL_MS = 10;
/** Pause between the node cordoned and the Complete edit (0: at once, to see signals cross). */
const SETTLE_MS = Number(process.env.SLIPWAY_BENCH_SETTLE_MS ?? 1000);

const kube = createKube();
const custom = kube.config.makeApiClient(CustomObjectsApi);
const where = { group: GROUP, version: VERSION, plural: NODE_MAINTENANCE.plural };
const run = `bench-nmb-${Date.now().toString(36)}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Polls `check` every POLL_MS until it holds; the time it first held, from performance.now(). */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return performance.now();
    if (Date.now() > deadline) throw new Error(`${what}: not after ${timeoutMs} ms`);
    await sleep(POLL_MS);
  }
}
type Obj = { metadata: { name: string; uid: string; finalizers?: string[] }; status?: NodeMaintenanceStatus };
const getObj = async (name: string) => {
  try {
    return (await custom.getClusterCustomObject({ ...where, name })) as Obj;
  } catch (err) {
    if (apiStatus(err) === 404) return undefined;
    throw err;
  }
};

/**
 * The objects of one collection as a watch delivers them, and the moment a condition on one first
 * holds: the changes are seen as they happen, without a poll loading the apiserver being measured.
 */
class Watched<O extends KubernetesObject> {
  private readonly objects = new Map<string, O>();
  private readonly waiters = new Set<{ name: string; check: (o: O | undefined) => boolean; done: (t: number) => void }>();
  private abort?: { abort(): void };

  constructor(private readonly path: string, private readonly labelSelector?: string) {}

  async start(): Promise<void> {
    this.abort = await new Watch(kube.config).watch(
      this.path,
      this.labelSelector ? { labelSelector: this.labelSelector } : {},
      (type, o: O) => {
        const name = o.metadata!.name!;
        if (type === 'DELETED') this.objects.delete(name);
        else this.objects.set(name, o);
        const now = performance.now();
        for (const w of this.waiters) if (w.name === name && w.check(this.objects.get(name))) (this.waiters.delete(w), w.done(now));
      },
      (err: unknown) => {
        if (this.abort) console.log(`watch ${this.path} ended${err ? `: ${String(err)}` : ''}: later figures may be late`);
      },
    );
  }

  /** performance.now() when `check` first holds for the object `name` (undefined: it does not exist). */
  until(name: string, check: (o: O | undefined) => boolean, timeoutMs = 60_000): Promise<number> {
    if (check(this.objects.get(name))) return Promise.resolve(performance.now());
    return new Promise((resolve, reject) => {
      const w = { name, check, done: (t: number) => (clearTimeout(timer), resolve(t)) };
      const timer = setTimeout(() => (this.waiters.delete(w), reject(new Error(`${name}: not as wanted after ${timeoutMs} ms`))), timeoutMs);
      this.waiters.add(w);
    });
  }

  stop(): void {
    const a = this.abort;
    this.abort = undefined;
    a?.abort();
  }
}
const cordoned = (n: V1Node | undefined) => n?.spec?.unschedulable === true && n.metadata?.labels?.[MAINTENANCE_STATE_LABEL] !== undefined;
const released = (n: V1Node | undefined) => !!n && !n.spec?.unschedulable && n.metadata?.labels?.[MAINTENANCE_STATE_LABEL] === undefined;

const nodes = await ensureFakeNodeGroup(kube.core, run, NODES);
await kube.core.createNamespace({ body: { metadata: { name: run } } }); // the bridge's Lease lives here
const settings = { ...temporalSettings(), taskQueue: run };
const client = await connectClient(settings);
const { worker } = await createWorker({ deps: { kube }, settings, prebuiltBundle: true });
const working = worker.run();
// The bridge gets a connection of its own, whose calls are counted by method.
type Interceptor = NonNullable<NonNullable<Parameters<typeof Connection.connect>[0]>['interceptors']>[number];
const grpcCalls = new Map<string, number>();
const counting: Interceptor = (options, nextCall) => {
  const method = options.method_definition.path.replace(/^.*\//, '');
  grpcCalls.set(method, (grpcCalls.get(method) ?? 0) + 1);
  // The call itself, unchanged (grpc-js types the answer as its InterceptingCall class; any call object does).
  return nextCall(options) as unknown as ReturnType<Interceptor>;
};
const bridgeConnection = await Connection.connect({ ...settings.connection, interceptors: [counting] });
const bridgeClient = new Client({ connection: bridgeConnection, namespace: settings.namespace });
const bridge = await startBridge({ kube, client: bridgeClient, settings, taskQueue: run, namespace: run, leaseNamespace: run, log: () => undefined });
await until('bridge leads', async () => bridge.isLeader());
const nodeWatch = new Watched<V1Node>('/api/v1/nodes', `${NODE_GROUP_LABEL}=${run}`);
const objectWatch = new Watched<KubernetesObject & Obj>(`/apis/${GROUP}/${VERSION}/${NODE_MAINTENANCE.plural}`);
await Promise.all([nodeWatch.start(), objectWatch.start()]);

const selector = (i: number) =>
  i < NODES
    ? { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodes[i]!] }] }] }
    : { nodeSelectorTerms: [{ matchExpressions: [{ key: 'example.com/bench-selects-nothing', operator: 'In', values: ['none'] }] }] };
const names: string[] = [];

// ---- 0. Baseline: the worker and the bridge with nothing to follow.
const base0 = cpuSeconds({ bench: process.pid });
await sleep(BASELINE_S * 1000);
const base1 = cpuSeconds({ bench: process.pid });
const baseline = (k: string) => ((base1.get(k) ?? 0) - (base0.get(k) ?? 0)) / BASELINE_S;

// ---- 1. Created → workflow running.
const cpuBefore = cpuSeconds({ bench: process.pid });
const tBefore = performance.now();
const startLag: number[] = [];
const mirrorLag: number[] = [];
/** Creates an Idle maintenance selecting node i (none when i ≥ NODES) and measures until its workflow runs. */
async function create(name: string, i: number): Promise<void> {
  names.push(name);
  const t0 = performance.now();
  const obj = (await custom.createClusterCustomObject({
    ...where,
    body: { apiVersion: API_VERSION, kind: NODE_MAINTENANCE.kind, metadata: { name }, spec: { nodeSelector: selector(i), stage: 'Idle', reason: 'bench' } },
  })) as Obj;
  const id = maintenanceWorkflowId(obj.metadata);
  const handle = client.workflow.getHandle(id);
  const [tRunning, tMirrored] = await Promise.all([
    until(`${id} running`, async () => (await handle.describe().catch(() => undefined))?.status.name === 'RUNNING'),
    objectWatch.until(name, (o) => o?.status?.workflowId === id),
  ]);
  startLag.push(tRunning - t0);
  mirrorLag.push(tMirrored - t0);
}
for (let i = 0; i < MAINTENANCES; i++) await create(`${run}-${i}`, i);

// ---- 1b. Nothing changes: what following MAINTENANCES Idle workflows costs.
await sleep(5000); // the last creations' first tasks settle
const idle = { calls: new Map(grpcCalls), counts: { ...bridge.stats }, cpu: cpuSeconds({ bench: process.pid }), t: performance.now() };
console.log(`${new Date().toISOString()} ${MAINTENANCES} created; idle window of ${IDLE_S} s`);
for (let left = IDLE_S * 1000; left > 0; left -= 10_000) {
  const c0 = cpuSeconds({ bench: process.pid });
  const q0 = bridge.stats.statusQueries;
  await sleep(Math.min(10_000, left));
  const c1 = cpuSeconds({ bench: process.pid });
  const d = (k: string) => ((c1.get(k) ?? 0) - (c0.get(k) ?? 0)).toFixed(1);
  console.log(`  ${new Date().toISOString()} CPU-s this process ${d('bench')}, temporal ${d('temporal')}, apiserver ${d('kube-apiserver')}; status queries ${bridge.stats.statusQueries - q0}`);
}
const idleS = (performance.now() - idle.t) / 1000;
const idleCpu = cpuSeconds({ bench: process.pid });
const idleCalls = [...grpcCalls].map(([m, n]) => [m, n - (idle.calls.get(m) ?? 0)] as const).filter(([, n]) => n > 0).sort((a, b) => b[1] - a[1]);
const idleCallsTotal = idleCalls.reduce((s, [, n]) => s + n, 0);
const perS = (n: number) => (n / idleS).toFixed(2);
const idleLines = [
  `requests from the bridge to Temporal: ${perS(idleCallsTotal)}/s (${idleCalls.map(([m, n]) => `${m} ${perS(n)}/s`).join(', ') || 'none'})`,
  `status queries (tasks for the worker): ${perS(bridge.stats.statusQueries - idle.counts.statusQueries)}/s; history batches: ${perS(bridge.stats.historyPolls - idle.counts.historyPolls)}/s; task checks: ${perS(bridge.stats.taskChecks - idle.counts.taskChecks)}/s; status writes: ${perS(bridge.stats.statusWrites - idle.counts.statusWrites)}/s`,
  `CPU: ${[...idleCpu].filter(([k]) => k === 'bench' || k === 'temporal').map(([k, v]) => `${k === 'bench' ? 'this process (worker + bridge)' : k} ${((v - (idle.cpu.get(k) ?? 0)) / idleS).toFixed(3)} of a core (with nothing: ${baseline(k).toFixed(3)} over ${BASELINE_S} s)`).join(', ')}`,
];

// ---- 2. Stage edits → acted on, one maintenance (one node) at a time.
const cordonLag: number[] = [];
/** An edit: the wall-clock moment of the patch, the maintenance's workflow ID and the lag, for the breakdown. */
interface Edit { stage: 'Cordon' | 'Complete'; at: number; id: string; node: string; lag: number }
const cordonMirrorLag: number[] = [];
const completeLag: number[] = [];
// Where an edit's time goes, from the two workflows' histories (the server's clock, on this machine):
// the bridge (patch → specChanged accepted), the maintenance workflow (→ the node's coordinator started
// or signalled), the coordinator (→ its node write done).
interface Ev { type: string; at: number; activity?: string }
async function history(id: string): Promise<Ev[]> {
  const h = await client.workflow.getHandle(id).fetchHistory();
  const scheduled = new Map<string, string>();
  return (h.events ?? []).map((e) => {
    // The event's type, from the one attributes field it has set (workflowExecutionUpdateAccepted, ...).
    const type = Object.keys(e).find((k) => k.endsWith('EventAttributes') && (e as Record<string, unknown>)[k] != null)?.replace(/EventAttributes$/, '') ?? '?';
    const at = Number(e.eventTime?.seconds ?? 0) * 1000 + (e.eventTime?.nanos ?? 0) / 1e6;
    const s = e.activityTaskScheduledEventAttributes;
    if (s) scheduled.set(String(e.eventId), s.activityType?.name ?? '?');
    const ref = e.activityTaskStartedEventAttributes?.scheduledEventId ?? e.activityTaskCompletedEventAttributes?.scheduledEventId;
    return { type, at, activity: s?.activityType?.name ?? (ref != null ? scheduled.get(String(ref)) : undefined) };
  });
}
const parts = { Cordon: { bridge: [] as number[], workflow: [] as number[], coordinator: [] as number[] }, Complete: { bridge: [] as number[], workflow: [] as number[], coordinator: [] as number[] } };
const timelines: Array<{ stage: string; lag: number; lines: string[] }> = [];
/** Breaks one edit down (right after it: the node's coordinator is re-run each round, and history is read for its latest run). */
async function explain(e: Edit): Promise<void> {
  const m = (await history(e.id)).filter((x) => x.at >= e.at);
  const accepted = m.find((x) => x.type === 'workflowExecutionUpdateAccepted')?.at;
  if (accepted === undefined) return;
  const nAll = (await history(maintenanceNodeWorkflowId(e.node))).filter((x) => x.at >= e.at - 1000);
  const n = nAll.filter((x) => x.at >= accepted);
  const reached = n.find((x) => x.type === 'workflowExecutionStarted' || x.type === 'workflowExecutionSignaled')?.at;
  const written = n.find((x) => reached !== undefined && x.at >= reached && x.type === 'activityTaskCompleted' && x.activity === 'writeMaintenanceNodeState')?.at;
  if (reached === undefined || written === undefined) return;
  parts[e.stage].bridge.push(accepted - e.at);
  parts[e.stage].workflow.push(reached - accepted);
  parts[e.stage].coordinator.push(written - reached);
  const line = (who: string) => (x: Ev) => `    +${String(Math.round(x.at - e.at)).padStart(5)} ms ${who} ${x.type}${x.activity ? ` ${x.activity}` : ''}`;
  timelines.push({ stage: e.stage, lag: e.lag, lines: [...m.filter((x) => x.at <= reached).map(line('nm')), ...nAll.filter((x) => x.at <= written).map(line('nm-node'))] });
}

console.log(`${new Date().toISOString()} stage edits`);
const hasStage = (o: Obj | undefined, stage: string): boolean => o?.status?.stageStatuses?.some((s) => s.name === stage) ?? false;
for (let r = 0; r < ROUNDS; r++) {
  // Each round edits a fresh Idle maintenance per node (a completed one is done); round 0's are phase 1's.
  if (r > 0) for (let i = 0; i < NODES; i++) await create(`${run}-${i}-r${r}`, i);
  for (let i = 0; i < NODES; i++) await edit(r ? `${run}-${i}-r${r}` : `${run}-${i}`, nodes[i]!);
}
async function edit(name: string, node: string): Promise<void> {
  const id = (await getObj(name))!.status!.workflowId!;
  const t0 = performance.now();
  const at = Date.now();
  await custom.patchClusterCustomObject({ ...where, name, body: { spec: { stage: 'Cordon' } } }, mergePatch);
  const [tNode, tMirrored] = await Promise.all([
    nodeWatch.until(node, cordoned),
    objectWatch.until(name, (o) => hasStage(o, 'Cordon')),
  ]);
  cordonLag.push(tNode - t0);
  cordonMirrorLag.push(tMirrored - t0);
  const cordonEdit: Edit = { stage: 'Cordon', at, id, node, lag: tNode - t0 };

  // As an operator would, edit on a moment later: an edit the instant the node is cordoned crosses the
  // coordinator's report to the maintenance, and two signals crossing between the same two workflows
  // were delivered 1-4 s late by the dev server (seen in this bench's traces).
  await sleep(SETTLE_MS);
  const t1 = performance.now();
  const at1 = Date.now();
  await custom.patchClusterCustomObject({ ...where, name, body: { spec: { stage: 'Complete' } } }, mergePatch);
  completeLag.push((await nodeWatch.until(node, released)) - t1);
  await explain(cordonEdit);
  await explain({ stage: 'Complete', at: at1, id, node, lag: completeLag.at(-1)! });
}

const cpu = formatCpu(cpuBefore, cpuSeconds({ bench: process.pid }), (performance.now() - tBefore) / 1000);
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]!;
const fig = (xs: number[]) => `p50 ${pct(xs, 50).toFixed(0)} ms, p99 ${pct(xs, 99).toFixed(0)} ms, max ${Math.max(...xs).toFixed(0)} ms (n=${xs.length})`;
function breakdown(stage: 'Cordon' | 'Complete'): void {
  const p = parts[stage];
  console.log(`  of which the bridge (patch → specChanged accepted by the workflow): ${fig(p.bridge)}`);
  console.log(`           the maintenance workflow (→ the node's coordinator ${stage === 'Cordon' ? 'started' : 'signalled'}): ${fig(p.workflow)}`);
  console.log(`           the node coordinator (→ its node write done): ${fig(p.coordinator)}`);
}
console.log(`\n## Bridge lag for NodeMaintenance (${MAINTENANCES} maintenances created one at a time and left running Idle, then ${ROUNDS} rounds over ${NODES} kwok nodes: a maintenance per node edited Idle → Cordon → Complete, one at a time, the next round's created first; real workflows)`);
console.log(`while nothing changes (${MAINTENANCES} Idle maintenances followed, ${idleS.toFixed(0)} s):`);
for (const l of idleLines) console.log(`  ${l}`);
console.log(`created → workflow running (describe): ${fig(startLag)} (target p99 ≤ 1 s)`);
console.log(`created → status.workflowId mirrored: ${fig(mirrorLag)}`);
console.log(`spec.stage Idle → Cordon → node cordoned (unschedulable + ${MAINTENANCE_STATE_LABEL}): ${fig(cordonLag)} (target p99 ≤ 1 s)`);
breakdown('Cordon');
console.log(`spec.stage Idle → Cordon → Cordon in status.stageStatuses: ${fig(cordonMirrorLag)}`);
console.log(`spec.stage Cordon → Complete → node uncordoned: ${fig(completeLag)} (target p99 ≤ 1 s)`);
breakdown('Complete');
console.log(`${cpu} (bench = this process: the bridge, the worker and the measuring)`);
if (process.env.SLIPWAY_BENCH_TRACE) {
  for (const t of timelines.sort((a, b) => b.lag - a.lag).slice(0, 4)) console.log(`  the slowest edits: ${t.stage} in ${t.lag.toFixed(0)} ms\n${t.lines.join('\n')}`);
}

// ---- Clean up: delete every object; the bridge releases them (Complete first for held ones).
const tClean = performance.now();
for (const name of names) await custom.deleteClusterCustomObject({ ...where, name }).catch(() => undefined);
await Promise.all(names.map((name) => objectWatch.until(name, (o) => !o, 120_000))).catch(async (err: unknown) => {
  console.log(`clean-up: ${err instanceof Error ? err.message : String(err)}; dropping finalizers`);
  for (const name of names) await custom.patchClusterCustomObject({ ...where, name, body: { metadata: { finalizers: null } } }, mergePatch).catch(() => undefined);
});
await Promise.all(nodes.map((n) => nodeWatch.until(n, released, 60_000))).catch((err: unknown) =>
  console.log(`clean-up: ${err instanceof Error ? err.message : String(err)}`),
);
console.log(`clean-up: ${names.length} deleted and gone, ${NODES} nodes uncordoned in ${((performance.now() - tClean) / 1000).toFixed(1)} s`);

nodeWatch.stop();
objectWatch.stop();
await bridge.stop();
worker.shutdown();
await working;
for (const n of nodes) await kube.core.deleteNode({ name: n }).catch(() => undefined);
await kube.core.deleteNamespace({ name: run });
await client.connection.close();
await bridgeConnection.close();
