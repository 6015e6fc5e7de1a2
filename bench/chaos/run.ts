// One chaos run: a real cycle of a small Auto Scaling group (moto) through the real bridge and a
// real worker, each its own process, with one fault. The scenario: 2 nodes cycled one at a time;
// app `a` (wave 0, PDB maxUnavailable 1), app `b` (wave 1 by a DrainRule order 100), app `k`
// (label slipway.dev/drain: skip), app `s` (a Skip DrainRule) and app `v` (one pod with a
// PersistentVolumeClaim whose VolumeAttachment `VolumeAttacher` keeps on its node and deletes
// 1 s after the pod has gone, as the attach/detach controller would). Then the invariants
// (stack/invariants.ts) are judged from the audit log, the Nodes, moto and Temporal.
// The NodeMaintenance and CLI drain scenarios are in nodes.ts.
import { spawn, execFile, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { AppsV1Api, CustomObjectsApi, PolicyV1Api, StorageV1Api, type V1Pod } from '@kubernetes/client-node';
import { DeleteAutoScalingGroupCommand, DescribeAutoScalingGroupsCommand } from '@aws-sdk/client-auto-scaling';
import type { Client } from '@temporalio/client';
import { CYCLE_NODE_REQUEST } from '../../api/cycle-node-request.js';
import { DETACHED_FROM_GROUP } from '../../api/node-groups.js';
import { DRAIN_RULE } from '../../api/drain-rule.js';
import { GROUP, VERSION } from '../../api/crd.js';
import { NODE_DISRUPTION_BUDGET, type NodeDisruptionBudgetStatus } from '../../api/node-disruption-budget.js';
import { createAws, type Aws } from '../../activities/aws.js';
import { apiStatus, createKube, type Kube } from '../../kube/client.js';
import { createReadyNamespace } from '../../starter/namespace.js';
import { deleteNodeGroups } from '../../stack/kwok/nodes.js';
import { seedAutoScalingGroup } from '../../stack/aws/seed.js';
import { auditMark, readAuditSince } from '../../stack/audit-log.js';
import { byControlPlane, CapacitySampler, cloudAtEnd, CordonRecorder, judge, nodesAtEnd, PodRecorder, runningWorkflows, type Verdict } from '../../stack/invariants.js';
import { WORKER_NODE_FLAGS } from '../../worker/config.js';
import { cycleWorkflowId, nodeCycleWorkflowId, nodeDrainWorkflowId } from '../../workflows/ids.js';
import { nodeGroupLockId } from '../../workflows/ids.js';
import type { Fault } from './faults.js';
import { mergePatch } from '../../kube/patch.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';
import { DRAIN_LABEL } from '../../api/drain-plan.js';
import { API_VERSION } from '../../api/names.js';

const run$ = promisify(execFile);
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
export const LOGS = process.env.SLIPWAY_CHAOS_LOGS ?? '/tmp/slipway-chaos';
const NODES = 2;
/**
 * The NodeDisruptionBudget over the group. The request asks for both nodes at once (concurrency 2):
 * the budget, not the request, keeps it to one at a time, so `budget-kept` judges admission (2
 * cordoned at once would break it) as well as leaks (a leaked slot would also hold the second node).
 */
const BUDGET_LIMIT = 1;
const NB = { group: GROUP, version: VERSION, plural: NODE_DISRUPTION_BUDGET.plural };

export interface RunResult {
  fault: string;
  kind: string;
  /** killed | not reached | restarted | … */
  outcome: string;
  /** Restart of what was killed (or the server back) → the request's next step, ms. */
  resumeMs?: number;
  /** Request created → ended, ms. */
  endMs?: number;
  phase: string;
  verdicts: Verdict[];
  error?: string;
  group: string;
}

export async function waitFor<T>(what: string, fn: () => Promise<T | undefined | false>, timeoutMs = 120_000, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? ` (${(last as Error).message})` : ''}`);
    await sleep(everyMs);
  }
}

export const stack = (...args: string[]) => run$('bash', ['stack/stack.sh', ...args], { maxBuffer: 1 << 20 });

/** A process of ours (worker or bridge) that the runner kills, watches die and starts again. */
export class Proc {
  child?: ChildProcess;
  exits: Array<{ atMs: number; signal: string | null; code: number | null }> = [];
  private exited?: Promise<void>;

  constructor(private readonly label: string, private readonly args: string[], private readonly env: NodeJS.ProcessEnv, private readonly log: string) {}

  start(): void {
    const fd = openSync(this.log, 'a');
    const child = spawn('node', this.args, { env: this.env, stdio: ['ignore', fd, fd] });
    this.child = child;
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        this.exits.push({ atMs: Date.now(), signal, code });
        resolve();
      }),
    );
  }

  get alive(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Resolves when the current process has exited. */
  async died(): Promise<void> {
    await this.exited;
  }

  kill(signal: NodeJS.Signals = 'SIGKILL'): void {
    if (this.alive) this.child!.kill(signal);
  }

  async stop(): Promise<void> {
    if (!this.alive) return;
    this.child!.kill('SIGTERM');
    await Promise.race([this.exited, sleep(5000)]);
    this.kill('SIGKILL');
    await this.exited;
  }

  toString(): string {
    return this.label;
  }
}

interface Ctx {
  kube: Kube;
  aws: Aws;
  client: Client;
  group: string;
  ns: string;
  dir: string;
}

/**
 * A point or random fault on `proc`: waits for it to die at its point (or kills it at its moment),
 * restarts it, and says what happened; undefined restartedAt when the run ended first.
 */
export async function killAndRestart(
  fault: Extract<Fault, { kind: 'point' | 'random' }>,
  proc: Proc,
  ended: Promise<unknown>,
  timeout: Promise<unknown>,
  t0: number,
): Promise<{ outcome: string; restartedAt?: number }> {
  const dying = fault.kind === 'point' ? proc.died() : sleep(Math.max(0, fault.atMs - (Date.now() - t0))).then(() => proc.kill('SIGKILL')).then(() => proc.died());
  const first = await Promise.race([dying.then(() => 'died' as const), ended.then(() => 'ended' as const), timeout.then(() => 'timeout' as const)]);
  if (first !== 'died') return { outcome: fault.kind === 'point' ? 'point not reached' : 'ended before the kill' };
  const exit = proc.exits.at(-1)!;
  const outcome = `${fault.process} killed (${exit.signal ?? `exit ${exit.code}`}) at +${((exit.atMs - t0) / 1000).toFixed(1)} s`;
  const restartedAt = Date.now();
  proc.start();
  return { outcome, restartedAt };
}

export function deployment(name: string, group: string, replicas: number, labels: Record<string, string>, spread: 'DoNotSchedule' | 'ScheduleAnyway' = 'DoNotSchedule') {
  return {
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name, ...labels } },
        spec: {
          nodeSelector: { [NODE_GROUP_LABEL]: group },
          terminationGracePeriodSeconds: 1,
          topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: spread, labelSelector: { matchLabels: { app: name } } }],
          containers: [{ name: 'c', image: 'registry.invalid/app:1' }],
        },
      },
    },
  };
}

export const ready = (p: V1Pod) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp;

/** The group, its Nodes, the namespace, the apps, the PDB and the DrainRules. */
async function setUp(c: Ctx): Promise<{ oldNodes: string[]; instances: string[] }> {
  const g = await seedAutoScalingGroup(c.aws, c.group, NODES);
  const instances = g.Instances!.map((i) => i.InstanceId!);
  const oldNodes = await waitFor('a Ready Node per instance', async () => {
    const nodes = (await c.kube.core.listNode({ labelSelector: `${NODE_GROUP_LABEL}=${c.group}` })).items.filter((n) => n.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True'));
    return nodes.length === NODES ? nodes.map((n) => n.metadata!.name!) : undefined;
  }, 90_000);
  await c.kube.core.createNamespace({ body: { metadata: { name: c.ns } } });
  await createReadyNamespace(c.kube.core, c.ns);
  const apps = c.kube.config.makeApiClient(AppsV1Api);
  const custom = c.kube.config.makeApiClient(CustomObjectsApi);
  await c.kube.config.makeApiClient(PolicyV1Api).createNamespacedPodDisruptionBudget({ namespace: c.ns, body: { metadata: { name: 'a' }, spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'a' } } } } });
  const rule = (name: string, spec: unknown) => custom.createClusterCustomObject({ group: DRAIN_RULE.group, version: DRAIN_RULE.version, plural: DRAIN_RULE.plural, body: { apiVersion: API_VERSION, kind: DRAIN_RULE.kind, metadata: { name }, spec } });
  await rule(`${c.group}-wave1`, { drain: { behavior: 'Drain', order: 100 }, pods: [{ selector: { matchLabels: { 'chaos-wave': c.group } } }] });
  await rule(`${c.group}-skip`, { drain: { behavior: 'Skip' }, pods: [{ selector: { matchLabels: { 'chaos-skip': c.group } } }] });
  await apps.createNamespacedDeployment({ namespace: c.ns, body: deployment('a', c.group, 4, {}) });
  await apps.createNamespacedDeployment({ namespace: c.ns, body: deployment('b', c.group, 2, { 'chaos-wave': c.group }) });
  await apps.createNamespacedDeployment({ namespace: c.ns, body: deployment('k', c.group, 2, { [DRAIN_LABEL]: 'skip' }) });
  await apps.createNamespacedDeployment({ namespace: c.ns, body: deployment('s', c.group, 2, { 'chaos-skip': c.group }) });
  await custom.createClusterCustomObject({
    ...NB,
    body: { apiVersion: API_VERSION, kind: NODE_DISRUPTION_BUDGET.kind, metadata: { name: c.group }, spec: { nodeSelector: { matchLabels: { [NODE_GROUP_LABEL]: c.group } }, maxDisrupted: BUDGET_LIMIT } },
  });
  await volumeApp(c.kube, c.ns, c.group);
  await waitFor('11 pods Running', async () => (await c.kube.core.listNamespacedPod({ namespace: c.ns })).items.filter(ready).length === 11, 90_000);
  return { oldNodes, instances };
}

/**
 * App `v`: one pod with a claim on a pre-bound hostPath PV (`<group>-v`; not attachable, so the
 * controller-manager's attach/detach controller leaves our VolumeAttachments alone).
 */
export async function volumeApp(kube: Kube, ns: string, group: string): Promise<void> {
  const pv = `${group}-v`;
  await kube.core.createPersistentVolume({
    body: { metadata: { name: pv }, spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: `/tmp/${pv}` }, storageClassName: '', claimRef: { namespace: ns, name: 'v' } } },
  });
  await kube.core.createNamespacedPersistentVolumeClaim({ namespace: ns, body: { metadata: { name: 'v' }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: '', volumeName: pv, resources: { requests: { storage: '1Gi' } } } } });
  await waitFor('claim v Bound', async () => (await kube.core.readNamespacedPersistentVolumeClaim({ name: 'v', namespace: ns })).status?.phase === 'Bound', 60_000);
  const d = deployment('v', group, 1, {});
  d.spec.template.spec = { ...d.spec.template.spec, volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'v' } }] } as typeof d.spec.template.spec;
  await kube.config.makeApiClient(AppsV1Api).createNamespacedDeployment({ namespace: ns, body: d });
}

/**
 * Plays the attach/detach controller for app `v`: a VolumeAttachment (attached) for each node a
 * live `v` pod runs on, deleted 1 s after no `v` pod is left on that node. What it deleted and
 * when is the evidence's `volumes` (the audit log records the deletes too, with the current policy).
 */
export class VolumeAttacher {
  readonly volumes = new Map<string, { name: string; node: string; detachedAtMs?: number }>();
  private timer?: NodeJS.Timeout;
  private readonly emptySince = new Map<string, number>();
  private readonly storage: StorageV1Api;

  constructor(private readonly kube: Kube, private readonly ns: string, private readonly group: string) {
    this.storage = kube.config.makeApiClient(StorageV1Api);
  }

  start(): void {
    const tick = async () => {
      try {
        await this.step();
      } catch {
        // the apiserver away (a fault): try again
      }
      if (this.timer) this.timer = setTimeout(() => void tick(), 250);
    };
    this.timer = setTimeout(() => void tick(), 0);
  }

  private async step(): Promise<void> {
    const pods = (await this.kube.core.listNamespacedPod({ namespace: this.ns, labelSelector: 'app=v' })).items;
    const on = new Set(pods.map((p) => p.spec?.nodeName).filter((n): n is string => !!n));
    for (const node of on) {
      const running = pods.some((p) => p.spec?.nodeName === node && p.status?.phase === 'Running');
      const name = `${this.group}-v-${node}`;
      if (!running || this.volumes.has(name)) continue;
      await this.storage.createVolumeAttachment({ body: { metadata: { name }, spec: { attacher: 'fake.csi.slipway.dev', nodeName: node, source: { persistentVolumeName: `${this.group}-v` } } } });
      await this.storage.patchVolumeAttachmentStatus({ name, body: { status: { attached: true } } }, mergePatch);
      this.volumes.set(name, { name, node });
    }
    for (const v of this.volumes.values()) {
      if (v.detachedAtMs !== undefined || on.has(v.node)) {
        this.emptySince.delete(v.name);
        continue;
      }
      const since = this.emptySince.get(v.name) ?? Date.now();
      this.emptySince.set(v.name, since);
      if (Date.now() - since < 1000) continue;
      await this.storage.deleteVolumeAttachment({ name: v.name }).catch((err: unknown) => {
        if (apiStatus(err) !== 404) throw err;
      });
      v.detachedAtMs = Date.now();
    }
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  list() {
    return [...this.volumes.values()];
  }

  /** Removes what the run left (its VolumeAttachments and the PV). */
  async cleanup(): Promise<void> {
    this.stop();
    for (const v of this.volumes.values()) await this.storage.deleteVolumeAttachment({ name: v.name }).catch(() => undefined);
    await this.kube.core.deletePersistentVolume({ name: `${this.group}-v` }).catch(() => undefined);
  }
}

async function tearDown(c: Ctx, procs: Proc[]): Promise<void> {
  for (const p of procs) await p.stop().catch(() => undefined);
  const custom = c.kube.config.makeApiClient(CustomObjectsApi);
  const cnr = { group: CYCLE_NODE_REQUEST.group, version: CYCLE_NODE_REQUEST.version, plural: CYCLE_NODE_REQUEST.plural, namespace: c.ns, name: 'chaos' };
  await custom.patchNamespacedCustomObject({ ...cnr, body: [{ op: 'remove', path: '/metadata/finalizers' }] }).catch(() => undefined);
  await custom.deleteNamespacedCustomObject(cnr).catch(() => undefined);
  for (const r of ['wave1', 'skip']) await custom.deleteClusterCustomObject({ group: DRAIN_RULE.group, version: DRAIN_RULE.version, plural: DRAIN_RULE.plural, name: `${c.group}-${r}` }).catch(() => undefined);
  await custom.deleteClusterCustomObject({ ...NB, name: c.group }).catch(() => undefined);
  await c.kube.core.deleteNamespace({ name: c.ns }).catch(() => undefined);
  await c.aws.autoscaling.send(new DeleteAutoScalingGroupCommand({ AutoScalingGroupName: c.group, ForceDelete: true })).catch(() => undefined);
  await deleteNodeGroups(c.kube.core, (g) => g === c.group).catch(() => undefined);
}

/** The request's workflows (request, node cycles, drains): their histories say when a step completed. */
function treeIds(requestId: string, nodes: string[]): string[] {
  return [requestId, ...nodes.flatMap((n) => [nodeCycleWorkflowId(requestId, n), nodeDrainWorkflowId(nodeCycleWorkflowId(requestId, n))])];
}

/** The first activity completed (or workflow closed) in the tree at or after `sinceMs`: the request's next step. */
export async function nextStepAt(client: Client, ids: string[], sinceMs: number): Promise<number | undefined> {
  let first: number | undefined;
  for (const id of ids) {
    let h;
    try {
      h = await client.workflow.getHandle(id).fetchHistory();
    } catch {
      continue; // not started (yet)
    }
    for (const e of h.events ?? []) {
      const at = Number(e.eventTime?.seconds ?? 0) * 1000 + Math.floor((e.eventTime?.nanos ?? 0) / 1e6);
      if (at < sinceMs) continue;
      if (e.activityTaskCompletedEventAttributes || e.workflowExecutionCompletedEventAttributes || e.workflowExecutionCanceledEventAttributes || e.childWorkflowExecutionCompletedEventAttributes) {
        first = Math.min(first ?? Infinity, at);
        break;
      }
    }
  }
  return first;
}

/** The workflows still running after `graceMs` (none: at once). */
export async function lingering(client: Client, ids: string[], graceMs: number): Promise<string[]> {
  const deadline = Date.now() + graceMs;
  for (;;) {
    const running = await runningWorkflows(client, ids);
    if (!running.length || Date.now() > deadline) return running;
    await sleep(2000);
  }
}

export interface RunOptions {
  client: Client;
  /** Limit for the request to end (the stated time of `ended-in-time`). */
  limitMs?: number;
  log?: (line: string) => void;
}

export async function runFault(fault: Fault, opts: RunOptions): Promise<RunResult> {
  if (fault.scenario === 'rollout') return (await import('./rollout.js')).runRolloutFault(fault, opts);
  if (fault.scenario !== 'cycle' && fault.scenario !== 'delete') return (await import('./nodes.js')).runNodeFault(fault, opts);
  const log = opts.log ?? (() => undefined);
  const kube = createKube();
  const aws = createAws();
  const group = `chaos-${Date.now().toString(36)}`;
  const dir = join(LOGS, group);
  mkdirSync(dir, { recursive: true });
  const c: Ctx = { kube, aws, client: opts.client, group, ns: group, dir };
  const baseEnv = { ...process.env, SLIPWAY_TASK_QUEUE: group, SLIPWAY_WATCH_NAMESPACE: group, SLIPWAY_FAILPOINTS: '' };
  const workerFp = join(dir, 'worker.failpoints');
  const bridgeFp = join(dir, 'bridge.failpoints');
  const worker = new Proc('worker', [...WORKER_NODE_FLAGS, 'dist/worker/main.js'], { ...baseEnv, SLIPWAY_FAILPOINTS_FILE: workerFp }, join(dir, 'worker.log'));
  // One replica restarted, as a pod's container would be: the same identity (its pod name).
  const bridge = new Proc('bridge', ['dist/bench/chaos/bridge.js'], { ...baseEnv, SLIPWAY_FAILPOINTS_FILE: bridgeFp, SLIPWAY_BRIDGE_IDENTITY: `${group}-bridge-0` }, join(dir, 'bridge.log'));
  const result: RunResult = { fault: fault.name, kind: fault.kind, outcome: '', phase: '', verdicts: [], group };
  const limitMs = (opts.limitMs ?? 180_000) + (fault.kind === 'server' ? 60_000 : 0);
  const recorder = new PodRecorder(kube, group, (p) => ({
    skip: p.metadata?.labels?.[DRAIN_LABEL] === 'skip' || p.metadata?.labels?.['chaos-skip'] === group,
    wave: p.metadata?.labels?.['chaos-wave'] === group ? 1 : 0,
  }));
  const cordons = new CordonRecorder(kube, `${NODE_GROUP_LABEL}=${group}`);
  const capacity = new CapacitySampler(aws, group);
  const attacher = new VolumeAttacher(kube, group, group);
  let stopped: string | undefined; // a stack server the fault stopped: started again in `finally`
  try {
    // The stack as a real cluster would be (an earlier fault may have left pods NotReady), or Slipway
    // would be judged on the stack's faults.
    await stack('check').catch(() => stack('recover'));
    const { oldNodes, instances } = await setUp(c);
    log(`${fault.name}: group ${group}, nodes ${oldNodes.join(', ')}`);
    if (fault.kind === 'point') {
      writeFileSync(fault.process === 'worker' ? workerFp : bridgeFp, `${fault.arm ?? fault.name}\n`);
    }
    await recorder.start();
    await cordons.start();
    const mark = await auditMark();
    capacity.start();
    attacher.start();
    await waitFor('app v\'s VolumeAttachment', async () => attacher.list().length > 0, 30_000, 250);
    worker.start();
    bridge.start();

    const custom = kube.config.makeApiClient(CustomObjectsApi);
    const cnrRef = { group: CYCLE_NODE_REQUEST.group, version: CYCLE_NODE_REQUEST.version, plural: CYCLE_NODE_REQUEST.plural, namespace: group };
    const t0 = Date.now();
    const created = (await custom.createNamespacedCustomObject({
      ...cnrRef,
      body: {
        apiVersion: API_VERSION,
        kind: CYCLE_NODE_REQUEST.kind,
        metadata: { name: 'chaos', namespace: group },
        spec: { nodeGroupName: group, provider: 'aws', selector: { matchLabels: { [NODE_GROUP_LABEL]: group } }, cycleSettings: { method: 'Drain', concurrency: 2, cyclingTimeout: '10m' } },
      },
    })) as { metadata: { uid: string } };
    const requestId = cycleWorkflowId({ namespace: group, name: 'chaos', uid: created.metadata.uid });
    const ids = treeIds(requestId, oldNodes);
    const readCnr = async () => {
      try {
        return (await custom.getNamespacedCustomObject({ ...cnrRef, name: 'chaos' })) as { metadata: { resourceVersion: string; finalizers?: string[] }; status?: { phase?: string } };
      } catch (err) {
        if (apiStatus(err) === 404) return null;
        throw err;
      }
    };
    const detachedSeen = async () => (await kube.core.listNode({ labelSelector: `${NODE_GROUP_LABEL}=${group}` })).items.some((n) => n.metadata?.annotations?.[DETACHED_FROM_GROUP] !== undefined);
    const firstEviction = async () => (await readAuditSince(mark)).some((e) => e.objectRef?.namespace === group && e.objectRef.subresource === 'eviction' && e.responseStatus?.code === 201 && !byControlPlane(e));

    // The delete scenario: delete the request once its first batch is detached (healing follows).
    const deleting = fault.scenario === 'delete'
      ? waitFor('a detached node', detachedSeen, limitMs).then(() => custom.deleteNamespacedCustomObject({ ...cnrRef, name: 'chaos' }))
      : Promise.resolve();
    deleting.catch(() => undefined);

    // The end: the workflow closed and the bridge done with the object (final phase mirrored, or the object gone).
    const ended = (async () => {
      const handle = await waitFor('the workflow', async () => {
        const h = opts.client.workflow.getHandle(requestId);
        await h.describe();
        return h;
      }, limitMs, 500);
      let phase: string;
      try {
        const r = (await handle.result()) as { phase?: string };
        phase = r.phase ?? 'Completed';
      } catch (err) {
        // Cancelled by the bridge because the request was deleted: healing ran (nothing-stranded judges it).
        const status = (await handle.describe()).status.name;
        phase = status === 'CANCELLED' && fault.scenario === 'delete' ? 'Failed' : `${status}: ${(err as Error).message}`;
      }
      await waitFor('the bridge done with the request', async () => {
        const o = await readCnr();
        return fault.scenario === 'delete' ? o === null : o?.status?.phase === phase;
      }, 90_000, 500);
      return { phase, atMs: Date.now() };
    })();
    ended.catch(() => undefined);
    const timeout = sleep(limitMs).then(() => 'timeout' as const);

    // The fault.
    let restartedAt: number | undefined;
    let resumeProbe: 'history' | 'cnr' = 'history';
    if (fault.kind === 'point' || fault.kind === 'random') {
      const k = await killAndRestart(fault, fault.process === 'worker' ? worker : bridge, ended, timeout, t0);
      result.outcome = k.outcome;
      restartedAt = k.restartedAt;
      if (restartedAt !== undefined) resumeProbe = fault.process === 'bridge' ? 'cnr' : 'history';
    } else if (fault.kind === 'none') {
      result.outcome = 'undisturbed';
    } else {
      const trigger = fault.name === 'moto.pause-30s' ? detachedSeen : firstEviction;
      const first = await Promise.race([waitFor(`the trigger of ${fault.name}`, trigger, limitMs).then(() => 'now' as const), ended.then(() => 'ended' as const)]);
      if (first === 'now') {
        const at = Date.now();
        let back: number | undefined;
        let recovered = '';
        if (fault.name === 'temporal.restart') {
          await stack('restart', 'temporal');
        } else if (fault.name === 'apiserver.stop-60s') {
          stopped = 'kube-apiserver';
          await stack('stop', 'kube-apiserver');
          await sleep(60_000);
          await stack('ensure', 'kube-apiserver');
          stopped = undefined;
          back = Date.now();
          // What a real cluster does by itself once its apiserver is back (kwok's pod conditions, the
          // controller-manager's caches): stack.sh recover, which also checks it. Slipway's resume
          // is measured from the apiserver back, not from the end of this.
          await stack('recover');
          recovered = ` (stack recovered ${((Date.now() - back) / 1000).toFixed(1)} s later)`;
        } else {
          const pid = Number(readFileSync(join(process.env.SLIPWAY_HOME ?? join(process.env.HOME!, '.cache/slipway'), 'run/moto.pid'), 'utf8'));
          stopped = `moto:${pid}`;
          process.kill(pid, 'SIGSTOP');
          await sleep(30_000);
          process.kill(pid, 'SIGCONT');
          stopped = undefined;
        }
        restartedAt = back ?? Date.now();
        result.outcome = `${fault.name.split('.')[0]} back after ${((restartedAt - at) / 1000).toFixed(1)} s (at +${((at - t0) / 1000).toFixed(1)} s)${recovered}`;
      } else {
        result.outcome = 'ended before the trigger';
      }
    }

    // Time to resume: restart → the request's next step (an activity completed; for the bridge, its next write).
    if (restartedAt !== undefined) {
      const since = restartedAt;
      const rv = (await readCnr().catch(() => undefined))?.metadata.resourceVersion;
      const resumed = await Promise.race([
        waitFor('the next step', async () => {
          if (resumeProbe === 'cnr') {
            const o = await readCnr();
            return o === null || o.metadata.resourceVersion !== rv ? Date.now() : undefined;
          }
          return nextStepAt(opts.client, ids, since);
        }, limitMs, 250).catch(() => undefined),
        // Ended before the probe's next look: the end itself is the step (for the bridge, the finalizer's
        // removal deletes the request; for the worker, the last activity completed before it).
        ended.then(async (e) => (resumeProbe === 'cnr' ? Math.max(e.atMs, since) : nextStepAt(opts.client, ids, since).catch(() => undefined))),
        timeout.then(() => undefined),
      ]);
      if (resumed !== undefined) result.resumeMs = resumed - since;
    }

    const end = await Promise.race([ended, timeout]);
    if (end === 'timeout') {
      result.phase = '';
      result.endMs = Date.now() - t0;
    } else {
      result.phase = end.phase;
      result.endMs = end.atMs - t0;
    }

    // Judge from what was recorded.
    cordons.close();
    capacity.stop();
    attacher.stop();
    await sleep(1500); // the audit log is written in batches
    const audit = (await readAuditSince(mark)).filter(
      (e) => e.objectRef?.namespace === group || (e.objectRef?.resource === 'nodes' && oldNodes.includes(e.objectRef.name ?? '')) || (e.objectRef?.resource === 'volumeattachments' && attacher.volumes.has(e.objectRef.name ?? '')),
    );
    const everInGroup = new Set(instances);
    const g = (await aws.autoscaling.send(new DescribeAutoScalingGroupsCommand({ AutoScalingGroupNames: [group] }))).AutoScalingGroups?.[0];
    for (const i of g?.Instances ?? []) everInGroup.add(i.InstanceId!);
    result.verdicts = judge({
      pods: recorder.list(),
      audit,
      drainedNodes: oldNodes,
      nodesAtEnd: await nodesAtEnd(kube, `${NODE_GROUP_LABEL}=${group}`),
      cloud: await cloudAtEnd(aws, group, everInGroup),
      capacity: capacity.samples,
      outcome: { phase: result.phase, tookMs: result.endMs ?? 0, limitMs },
      // The lock may outlive a holder that died without releasing it by its 1-minute probe (lock.ts).
      runningWorkflows: await lingering(opts.client, [...ids, nodeGroupLockId('aws', group)], 70_000),
      volumes: attacher.list(),
      budget: { name: group, limit: BUDGET_LIMIT, mostDisrupted: cordons.most, ledgerAtEnd: await ledgerAtEnd(kube, group) },
    });
  } catch (err) {
    result.error = (err as Error).message;
    log(`${fault.name}: ${(err as Error).stack}`);
  } finally {
    capacity.stop();
    cordons.close();
    recorder.close();
    await attacher.cleanup();
    if (stopped?.startsWith('moto:')) process.kill(Number(stopped.slice(5)), 'SIGCONT');
    else if (stopped) await stack('ensure', stopped).catch(() => undefined);
    await tearDown(c, [worker, bridge]);
  }
  return result;
}

/** The budget's ledger entries (holder/node), disrupted and waiting, once the run has ended. */
export async function ledgerAtEnd(kube: Kube, name: string): Promise<string[]> {
  const o = (await kube.config.makeApiClient(CustomObjectsApi).getClusterCustomObject({ ...NB, name })) as { status?: NodeDisruptionBudgetStatus };
  return [...(o.status?.disrupted ?? []), ...(o.status?.waiting ?? [])].map((e) => `${e.holder}/${e.node}`);
}

/** Whether the failpoint fired in this run (the marker the failpoint writes next to its file). */
export function fired(group: string, process: 'worker' | 'bridge'): boolean {
  return existsSync(join(LOGS, group, `${process}.failpoints.hit`));
}
