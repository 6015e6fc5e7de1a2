// Slipway's promises judged from what the cluster and the cloud recorded (the apiserver's audit log,
// the Nodes, moto), never from what Slipway reports about itself. Any test or harness on the local
// stack can call it: the chaos runner (bench/chaos/), its integration test, the benchmarks.
//   - `PodRecorder` watches a namespace and remembers where each pod ran (the audit log at Metadata
//     level names the pod, not its node) and how the drain was meant to treat it (wave, skip).
//   - `judge(evidence)` is pure: one verdict per invariant; the unit test feeds it records that
//     break each one.
//   - the collectors (`nodesAtEnd`, `cloudAtEnd`, `runningWorkflows`, the recorders) gather the rest of
//     the evidence; the audit log is read by `stack/audit-log.ts`, from a mark taken before the run.
import type { RolloutInvariantName } from './rollout-invariants.js';
import type { V1Node, V1Pod } from '@kubernetes/client-node';
import { DescribeAutoScalingGroupsCommand } from '@aws-sdk/client-auto-scaling';
import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import type { Client } from '@temporalio/client';
import { DETACHED_FROM_GROUP } from '../api/node-groups.js';
import { HELD_BY_ANNOTATION, MAINTENANCE_STATE_LABEL } from '../api/node-maintenance.js';
import type { Aws } from '../activities/aws.js';
import type { Kube } from '../kube/client.js';
import type { AuditEvent } from './audit-log.js';
import { RelistingWatch } from './relisting-watch.js';

/** A pod as the recorder saw it: where it ran and what the drain must do with it. */
export interface PodRecord {
  namespace: string;
  name: string;
  uid: string;
  node: string;
  /** A label or a Skip rule says the drain leaves it. */
  skip: boolean;
  /** Its eviction wave (DrainRule order); lower waves leave first. */
  wave: number;
  /** Its controller (owner name), for the returns bound. */
  controller?: string;
  /** When the recorder first saw it on its node (ms since the epoch). */
  seenAtMs?: number;
}

export interface Capacity {
  atMs: number;
  inService: number;
  desired: number;
}

export interface Evidence {
  /** The scenario's pods (every one seen on any node during the run). */
  pods: PodRecord[];
  /** Audit events of the run (evictions, pod and node deletes), in order. */
  audit: AuditEvent[];
  /** The nodes the request was to drain and remove (an ended heal keeps them). */
  drainedNodes: string[];
  /** The group's Nodes when the request has ended. */
  nodesAtEnd: Array<{ name: string; unschedulable: boolean; detached: boolean; /** Still marked held by a NodeMaintenance (its held-by annotation or state label). */ held?: boolean }>;
  /** Instances (moto) of the group at the end and those once in it that are neither in it nor terminated. */
  cloud?: { notInService: string[]; detachedRunning: string[] };
  /** Samples of the group's InService instances against its desired capacity during the run. */
  capacity: Capacity[];
  /** How the request ended ('' while running) and how long it took against its limit. */
  outcome: { phase: string; tookMs: number; limitMs: number };
  /** Workflows of the request still running after it ended. */
  runningWorkflows: string[];
  /** A controller's pods may come back to a cordoned node: this many extra evictions per drain (README). */
  returnsAllowed?: number;
  /**
   * VolumeAttachments of the run's nodes (the drain must wait for them to go before the node goes).
   * Gone when the audit log has their delete or, on a stack whose audit policy predates
   * VolumeAttachments, at `detachedAtMs` (when whoever played the attach/detach controller saw its
   * delete answered or `attached: false` written); the earlier of the two counts.
   */
  volumes?: Array<{ name: string; node: string; detachedAtMs?: number }>;
  /** The NodeDisruptionBudget over the run's nodes, if any: its limit, the most nodes seen cordoned at once (a Node watch), its ledger's entries at the end. */
  budget?: { name: string; limit: number; mostDisrupted: number; ledgerAtEnd: string[] };
}

export const INVARIANTS = {
  'skip-kept': 'no pod a rule or label said to Skip is evicted or deleted by Slipway',
  'waves-ordered': 'no eviction of a higher wave while a lower wave\'s pod is still on the node',
  'node-after-drain': 'no node deleted before its drain and volume-detach wait ended: no pod the drain had to evict, no VolumeAttachment left on it',
  'evicted-once': 'no pod evicted twice; no controller\'s pods evicted more than a few times in one drain',
  'nothing-stranded': 'no node left cordoned, detached or held by a maintenance, no instance detached or in standby, once the request ended',
  'capacity-kept': 'the group never below its desired capacity (surge first)',
  'ended-in-time': 'the request ended Successful or Failed (healed) within its limit',
  'no-orphan-workflow': 'no workflow left running for a finished request',
  'budget-kept': 'never more nodes disrupted (cordoned, until deleted or uncordoned) at once than the NodeDisruptionBudget allows, and its ledger empty once the request ended',
} as const;
export type InvariantName = keyof typeof INVARIANTS;

/** A rolling maintenance's run adds its own names (stack/rollout-invariants.ts). */
export interface Verdict<N extends string = InvariantName | RolloutInvariantName> {
  name: N;
  ok: boolean;
  detail: string;
}

const t = (e: AuditEvent) => Date.parse(e.requestReceivedTimestamp);
const ok2xx = (e: AuditEvent) => (e.responseStatus?.code ?? 0) >= 200 && (e.responseStatus?.code ?? 0) < 300;
/** The local control plane's own requests (garbage collection, kwok's kubelets): not Slipway's. */
export const byControlPlane = (e: AuditEvent): boolean => /kube-controller-manager|kube-scheduler|kwok/.test(e.userAgent ?? '');
const isEviction = (e: AuditEvent) => e.verb === 'create' && e.objectRef?.resource === 'pods' && e.objectRef.subresource === 'eviction' && ok2xx(e);
const isPodDelete = (e: AuditEvent) => e.verb === 'delete' && e.objectRef?.resource === 'pods' && !e.objectRef.subresource && ok2xx(e);
const isNodeDelete = (e: AuditEvent) => e.verb === 'delete' && e.objectRef?.resource === 'nodes' && ok2xx(e);
const isAttachmentDelete = (e: AuditEvent) => e.verb === 'delete' && e.objectRef?.resource === 'volumeattachments' && ok2xx(e);
const podId = (ns: string | undefined, name: string | undefined) => `${ns}/${name}`;
const list = (xs: string[], n = 4) => (xs.length > n ? `${xs.slice(0, n).join(', ')} and ${xs.length - n} more` : xs.join(', '));

/** When each pod left the API (its last delete, by anyone: kwok at its grace deadline, the GC). */
function goneAt(audit: AuditEvent[]): Map<string, number> {
  const gone = new Map<string, number>();
  for (const e of audit) if (isPodDelete(e)) gone.set(podId(e.objectRef!.namespace, e.objectRef!.name), t(e));
  return gone;
}

export function judge(ev: Evidence): Verdict<InvariantName>[] {
  const pods = new Map(ev.pods.map((p) => [podId(p.namespace, p.name), p]));
  const gone = goneAt(ev.audit);
  const evictions = ev.audit.filter(isEviction).filter((e) => pods.has(podId(e.objectRef!.namespace, e.objectRef!.name)));
  const out: Verdict<InvariantName>[] = [];
  const verdict = (name: InvariantName, bad: string[], good: string) => out.push({ name, ok: bad.length === 0, detail: bad.length ? list(bad) : good });

  // Skip: Slipway never evicts or deletes it (the GC deleting it with its node is the cycle's design).
  const skipTouched = ev.audit
    .filter((e) => (isEviction(e) || isPodDelete(e)) && !byControlPlane(e))
    .filter((e) => pods.get(podId(e.objectRef!.namespace, e.objectRef!.name))?.skip)
    .map((e) => `${e.objectRef!.name} ${isEviction(e) ? 'evicted' : 'deleted'}`);
  verdict('skip-kept', skipTouched, `${ev.pods.filter((p) => p.skip).length} skipped pods untouched`);

  // Waves: at each eviction, every pod of a lower wave on that node has already gone.
  const early: string[] = [];
  for (const e of evictions) {
    const p = pods.get(podId(e.objectRef!.namespace, e.objectRef!.name))!;
    for (const q of ev.pods) {
      if (q.node !== p.node || q.skip || q.wave >= p.wave) continue;
      const left = gone.get(podId(q.namespace, q.name)) ?? Infinity;
      // A pod that came to the node after this eviction (a return) was not there to wait for.
      if ((q.seenAtMs ?? 0) <= t(e) && left > t(e)) early.push(`${p.name} (wave ${p.wave}) evicted while ${q.name} (wave ${q.wave}) was on ${p.node}`);
    }
  }
  verdict('waves-ordered', early, `${evictions.length} evictions in wave order`);

  // Nodes: deleted only once every pod the drain had to evict has left it.
  const deletedEarly: string[] = [];
  const nodeDeletes = ev.audit.filter((e) => isNodeDelete(e) && ev.drainedNodes.includes(e.objectRef!.name!));
  const firstDelete = new Map<string, number>();
  for (const e of nodeDeletes) if (!firstDelete.has(e.objectRef!.name!)) firstDelete.set(e.objectRef!.name!, t(e));
  const vaGone = new Map<string, number>();
  for (const e of ev.audit) if (isAttachmentDelete(e) && !vaGone.has(e.objectRef!.name!)) vaGone.set(e.objectRef!.name!, t(e));
  for (const [node, at] of firstDelete) {
    const left = ev.pods.filter((p) => p.node === node && !p.skip && (gone.get(podId(p.namespace, p.name)) ?? Infinity) > at);
    if (left.length) deletedEarly.push(`${node} deleted with ${list(left.map((p) => p.name), 3)} on it`);
    // Its volumes: every VolumeAttachment to it gone (deleted, or marked detached) before the node.
    const attached = (ev.volumes ?? []).filter((v) => v.node === node).filter((v) => Math.min(vaGone.get(v.name) ?? Infinity, v.detachedAtMs ?? Infinity) > at);
    if (attached.length) deletedEarly.push(`${node} deleted with VolumeAttachment ${list(attached.map((v) => v.name), 3)} still on it`);
  }
  const volumes = (ev.volumes ?? []).filter((v) => firstDelete.has(v.node)).length;
  verdict('node-after-drain', deletedEarly, `${firstDelete.size} nodes deleted after their drain${volumes ? ` and ${volumes} volume detach${volumes > 1 ? 'es' : ''}` : ''}`);

  // Evictions: once per pod; per controller and node, its pods there plus a few returns.
  const perPod = new Map<string, number>();
  for (const e of evictions) perPod.set(podId(e.objectRef!.namespace, e.objectRef!.name), (perPod.get(podId(e.objectRef!.namespace, e.objectRef!.name)) ?? 0) + 1);
  const twice = [...perPod].filter(([, n]) => n > 1).map(([k, n]) => `${k} evicted ${n} times`);
  // A controller's pods on a node when its drain began (its first eviction), against all evictions
  // of that controller's pods there: the difference is returns.
  const drainBegan = new Map<string, number>();
  for (const e of evictions) {
    const node = pods.get(podId(e.objectRef!.namespace, e.objectRef!.name))!.node;
    drainBegan.set(node, Math.min(drainBegan.get(node) ?? Infinity, t(e)));
  }
  const perController = new Map<string, { evicted: number; pods: number }>();
  for (const p of ev.pods) {
    if (!p.controller) continue;
    const k = `${p.node}/${p.controller}`;
    const c = perController.get(k) ?? { evicted: 0, pods: 0 };
    if ((p.seenAtMs ?? 0) <= (drainBegan.get(p.node) ?? Infinity)) c.pods++;
    c.evicted += perPod.get(podId(p.namespace, p.name)) ?? 0;
    perController.set(k, c);
  }
  const returns = ev.returnsAllowed ?? 3;
  const tooMany = [...perController].filter(([, c]) => c.evicted > c.pods + returns).map(([k, c]) => `${k}: ${c.evicted} evictions of ${c.pods} pods`);
  verdict('evicted-once', [...twice, ...tooMany], `${perPod.size} pods evicted once each`);

  const stranded = [
    ...ev.nodesAtEnd.filter((n) => n.unschedulable).map((n) => `${n.name} cordoned`),
    ...ev.nodesAtEnd.filter((n) => n.detached).map((n) => `${n.name} marked detached`),
    ...ev.nodesAtEnd.filter((n) => n.held).map((n) => `${n.name} still held by a maintenance`),
    ...(ev.cloud?.notInService ?? []).map((i) => `${i} not InService`),
    ...(ev.cloud?.detachedRunning ?? []).map((i) => `${i} detached and running`),
  ];
  verdict('nothing-stranded', stranded, `${ev.nodesAtEnd.length} nodes schedulable${ev.cloud ? ', every instance InService in its group' : ''}`);

  const low = ev.capacity.filter((c) => c.inService < c.desired);
  verdict('capacity-kept', low.map((c) => `${c.inService}/${c.desired} InService at +${c.atMs} ms`), ev.capacity.length ? `min ${Math.min(...ev.capacity.map((c) => c.inService))}/${ev.capacity[0]!.desired} over ${ev.capacity.length} samples` : 'not sampled');

  const { phase, tookMs, limitMs } = ev.outcome;
  verdict('ended-in-time', phase !== 'Successful' && phase !== 'Failed' ? [`ended ${phase || 'never'}`] : tookMs > limitMs ? [`${phase} after ${tookMs} ms > ${limitMs} ms`] : [], `${phase} in ${(tookMs / 1000).toFixed(1)} s`);
  verdict('no-orphan-workflow', ev.runningWorkflows.map((w) => `${w} running`), 'none running');

  // The budget: judged by the Nodes, not by the ledger's own count; a leaked entry is a slot lost for good.
  const b = ev.budget;
  const overBudget = b && b.mostDisrupted > b.limit ? [`${b.mostDisrupted} nodes disrupted at once under ${b.name}'s limit of ${b.limit}`] : [];
  const leaked = (b?.ledgerAtEnd ?? []).map((e) => `${e} left in ${b!.name}'s ledger`);
  verdict('budget-kept', [...overBudget, ...leaked], b ? `at most ${b.mostDisrupted} of ${b.limit} disrupted; ledger empty` : 'no budget in this scenario');
  return out;
}

// ---- collecting --------------------------------------------------------------------------------

/** Watches a namespace's pods and remembers each one's node and drain treatment. */
export class PodRecorder {
  readonly pods = new Map<string, PodRecord>();
  private readonly watch: RelistingWatch<V1Pod>;

  constructor(
    kube: Kube,
    private readonly namespace: string,
    private readonly classify: (p: V1Pod) => { skip: boolean; wave: number },
  ) {
    this.watch = new RelistingWatch<V1Pod>(kube, `/api/v1/namespaces/${namespace}/pods`, undefined, () => kube.core.listNamespacedPod({ namespace }), (items) => items.forEach((p) => this.record(p)), (type, p) => {
      if (type !== 'DELETED') this.record(p);
    });
  }

  private record(p: V1Pod): void {
    const node = p.spec?.nodeName;
    if (!node) return;
    const { skip, wave } = this.classify(p);
    const owner = p.metadata?.ownerReferences?.[0]?.name?.replace(/-[a-z0-9]{6,10}$/, '');
    const seenAtMs = this.pods.get(p.metadata!.uid!)?.seenAtMs ?? Date.now();
    this.pods.set(p.metadata!.uid!, { namespace: this.namespace, name: p.metadata!.name!, uid: p.metadata!.uid!, node, skip, wave, controller: owner, seenAtMs });
  }

  start(): Promise<void> {
    return this.watch.start();
  }

  close(): void {
    this.watch.close();
  }

  list(): PodRecord[] {
    return [...this.pods.values()];
  }
}

/** Watches a group's Nodes and keeps the most cordoned at once (disrupted: cordoned until deleted or uncordoned). */
export class CordonRecorder {
  private readonly cordoned = new Set<string>();
  most = 0;
  private readonly watch: RelistingWatch<V1Node>;

  constructor(kube: Kube, labelSelector: string) {
    this.watch = new RelistingWatch<V1Node>(kube, '/api/v1/nodes', labelSelector, () => kube.core.listNode({ labelSelector }), (items) => {
      this.cordoned.clear();
      for (const n of items) this.see('ADDED', n);
    }, (type, n) => this.see(type, n));
  }

  private see(type: string, n: V1Node): void {
    const name = n.metadata!.name!;
    if (type !== 'DELETED' && n.spec?.unschedulable === true) this.cordoned.add(name);
    else this.cordoned.delete(name);
    this.most = Math.max(this.most, this.cordoned.size);
  }

  start(): Promise<void> {
    return this.watch.start();
  }

  close(): void {
    this.watch.close();
  }
}

/** Samples an Auto Scaling group's InService instances against its desired capacity (moto down: no sample). */
export class CapacitySampler {
  readonly samples: Capacity[] = [];
  private timer?: NodeJS.Timeout;
  private readonly t0 = Date.now();

  constructor(private readonly aws: Aws, private readonly group: string, private readonly everyMs = 1000) {}

  start(): void {
    const tick = async () => {
      try {
        const g = (await this.aws.autoscaling.send(new DescribeAutoScalingGroupsCommand({ AutoScalingGroupNames: [this.group] }))).AutoScalingGroups?.[0];
        if (g) this.samples.push({ atMs: Date.now() - this.t0, inService: (g.Instances ?? []).filter((i) => i.LifecycleState === 'InService').length, desired: g.DesiredCapacity ?? 0 });
      } catch {
        // moto stopped: nothing to judge
      }
      if (this.timer) this.timer = setTimeout(() => void tick(), this.everyMs);
    };
    this.timer = setTimeout(() => void tick(), 0);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** Moto at the end: the group's instances not InService, and instances once in it that are neither in it nor terminated. */
export async function cloudAtEnd(aws: Aws, group: string, everInGroup: Iterable<string>): Promise<{ notInService: string[]; detachedRunning: string[] }> {
  const g = (await aws.autoscaling.send(new DescribeAutoScalingGroupsCommand({ AutoScalingGroupNames: [group] }))).AutoScalingGroups?.[0];
  const inGroup = new Set((g?.Instances ?? []).map((i) => i.InstanceId!));
  const notInService = (g?.Instances ?? []).filter((i) => i.LifecycleState !== 'InService').map((i) => `${i.InstanceId} (${i.LifecycleState})`);
  const others = [...everInGroup].filter((id) => !inGroup.has(id));
  if (!others.length) return { notInService, detachedRunning: [] };
  const r = await aws.ec2.send(new DescribeInstancesCommand({ InstanceIds: others }));
  const detachedRunning = (r.Reservations ?? []).flatMap((x) => x.Instances ?? []).filter((i) => i.State?.Name !== 'terminated' && i.State?.Name !== 'shutting-down').map((i) => i.InstanceId!);
  return { notInService, detachedRunning };
}

/** The group's Nodes now: cordoned or still carrying the detach marker. */
export async function nodesAtEnd(kube: Kube, labelSelector: string): Promise<Evidence['nodesAtEnd']> {
  const nodes = (await kube.core.listNode({ labelSelector })).items.filter((n: V1Node) => !n.metadata?.deletionTimestamp);
  return nodes.map((n) => ({
    name: n.metadata!.name!,
    unschedulable: n.spec?.unschedulable === true,
    detached: n.metadata?.annotations?.[DETACHED_FROM_GROUP] !== undefined,
    held: n.metadata?.annotations?.[HELD_BY_ANNOTATION] !== undefined || n.metadata?.labels?.[MAINTENANCE_STATE_LABEL] !== undefined,
  }));
}

/** Which of these workflows are still running. */
export async function runningWorkflows(client: Client, ids: string[]): Promise<string[]> {
  const running: string[] = [];
  for (const id of ids) {
    try {
      const d = await client.workflow.getHandle(id).describe();
      if (d.status.name === 'RUNNING') running.push(id);
    } catch {
      // never started
    }
  }
  return running;
}
