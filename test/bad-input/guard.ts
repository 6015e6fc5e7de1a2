// The bad-input suite's witness: a kwok node group running an app under a PDB, served by a real
// worker (and, where a case needs one, a real bridge), that no bad input may touch. Each case marks
// the audit log before it acts and asserts after it that nothing was disrupted, judged from what the
// apiserver recorded and from the cluster, not from what Slipway says: no write to a guard node by
// anyone but the control plane, no pod of the app evicted or deleted, every node schedulable with
// the same slipway.dev/ keys, and the app's pods the same ones, Running.
import type { V1Node } from '@kubernetes/client-node';
import type { Worker, NativeConnection } from '@temporalio/worker';
import { ensureFakeNodeGroup } from '../../stack/kwok/nodes.js';
import { auditMark, readAuditSince, type AuditMark } from '../../stack/audit-log.js';
import { temporalSettings } from '../../shared/temporal.js';
import { createWorker } from '../../worker/worker.js';
import { BridgeFixture } from '../support/bridge.js';
import { byControlPlane, isRunning, type AuditEvent } from '../support/cluster.js';
import { deployApp } from '../support/cycle.js';
import { waitFor } from '../support/wait.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

export interface Mark {
  audit: AuditMark;
  at: Date;
}

const WRITES = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);
const slipwayKeys = (n: V1Node) =>
  Object.entries({ ...n.metadata?.labels, ...n.metadata?.annotations })
    .filter(([k]) => k.includes('slipway.dev'))
    .sort(([a], [b]) => a.localeCompare(b));

export class Guard {
  readonly f: BridgeFixture;
  /** The node group; named after the namespace, so the fixture's teardown deletes its nodes. */
  group = '';
  nodes: string[] = [];
  private podUids: string[] = [];
  private keys = new Map<string, [string, string][]>();
  private worker?: { worker: Worker; connection: NativeConnection; running: Promise<void> };

  constructor(prefix: string) {
    this.f = new BridgeFixture(prefix);
  }

  /** The group of `size` nodes, an app of 4 replicas (PDB maxUnavailable 1) on it, and a real worker on the fixture's task queue. */
  async setup(size = 2): Promise<this> {
    await this.f.setup();
    this.group = this.f.ns;
    this.nodes = await ensureFakeNodeGroup(this.f.c.core, this.group, size);
    await deployApp(this.f.c, this.f.ns, this.group, 4, { maxUnavailable: 1 });
    const pods = await waitFor('the guard app running', async () => {
      const l = (await this.f.c.core.listNamespacedPod({ namespace: this.f.ns, labelSelector: 'app=app' })).items.filter(isRunning);
      return l.length === 4 ? l : undefined;
    }, { timeoutMs: 60_000 });
    this.podUids = pods.map((p) => p.metadata!.uid!).sort();
    await this.remember();
    const { worker, connection } = await createWorker({ deps: { kube: this.f.c }, settings: { ...temporalSettings(), taskQueue: this.f.taskQueue } });
    this.worker = { worker, connection, running: worker.run() };
    return this;
  }

  /** A guard node that runs an app pod now: the scheduler may put all four on one node, so a case that needs pods to act on asks. */
  async nodeWithAppPods(): Promise<string> {
    const pods = (await this.f.c.core.listNamespacedPod({ namespace: this.f.ns, labelSelector: 'app=app' })).items.filter(isRunning);
    const node = pods.map((p) => p.spec?.nodeName).find((n): n is string => !!n && this.nodes.includes(n));
    if (!node) throw new Error(`no app pod is running on the guard's nodes (${this.nodes.join(', ')})`);
    return node;
  }

  /** A CycleNodeRequest spec aimed at the guard's nodes: what a bad case would disrupt if it were let through. */
  cnr(over: Record<string, unknown> = {}): Record<string, unknown> {
    return { nodeGroupName: this.group, selector: { matchLabels: { [NODE_GROUP_LABEL]: this.group } }, ...over };
  }

  /** Reads the nodes' slipway.dev/ keys (what untouched() expects) again: a case or file that annotates a node on purpose (a lifecycle hook, a template hash) calls it before its mark. */
  async remember(): Promise<void> {
    for (const n of (await this.f.c.core.listNode({ labelSelector: `${NODE_GROUP_LABEL}=${this.group}` })).items) this.keys.set(n.metadata!.name!, slipwayKeys(n));
  }

  async mark(): Promise<Mark> {
    return { audit: await auditMark(), at: new Date() };
  }

  /** Audit events recorded since the mark. */
  async auditSince(m: Mark): Promise<AuditEvent[]> {
    return (await readAuditSince(m.audit)).filter((e) => new Date(e.requestReceivedTimestamp) >= m.at);
  }

  /** Asserts that nothing was disrupted since the mark (the audit log backend is blocking: a request is logged before it is answered). */
  async untouched(m: Mark): Promise<void> {
    const events = await this.auditSince(m);
    const nodeWrites = events.filter(
      (e) => e.objectRef?.resource === 'nodes' && this.nodes.includes(e.objectRef.name ?? '') && WRITES.has(e.verb) && !byControlPlane(e),
    );
    expect(nodeWrites.map((e) => `${e.verb} nodes/${e.objectRef!.name}${e.objectRef!.subresource ? `/${e.objectRef!.subresource}` : ''} by ${e.user?.username}`)).toEqual([]);
    const podWrites = events.filter(
      (e) => e.objectRef?.resource === 'pods' && e.objectRef.namespace === this.f.ns && (e.objectRef.subresource === 'eviction' || e.verb === 'delete') && !byControlPlane(e),
    );
    expect(podWrites.map((e) => `${e.verb} pods/${e.objectRef!.name}${e.objectRef!.subresource ? `/${e.objectRef!.subresource}` : ''}`)).toEqual([]);
    const nodes = (await this.f.c.core.listNode({ labelSelector: `${NODE_GROUP_LABEL}=${this.group}` })).items;
    expect(nodes.map((n) => n.metadata!.name).sort()).toEqual([...this.nodes].sort());
    for (const n of nodes) {
      expect({ node: n.metadata!.name, unschedulable: n.spec?.unschedulable ?? false }).toEqual({ node: n.metadata!.name, unschedulable: false });
      expect(slipwayKeys(n)).toEqual(this.keys.get(n.metadata!.name!));
    }
    const pods = (await this.f.c.core.listNamespacedPod({ namespace: this.f.ns, labelSelector: 'app=app' })).items;
    expect(pods.filter(isRunning).map((p) => p.metadata!.uid!).sort()).toEqual(this.podUids);
  }

  async teardown(): Promise<void> {
    if (this.worker) {
      this.worker.worker.shutdown();
      await this.worker.running.catch(() => undefined);
      await this.worker.connection.close();
    }
    await this.f.teardown();
  }
}
