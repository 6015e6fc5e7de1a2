// Fixtures for drain tests on the local stack: a node group of one target node (every workload
// lands there) plus spare nodes added afterwards for replacements, a namespace, workloads, an
// in-process worker on a private task queue, and readers of the audit log.
import { BatchV1Api, type V1Pod } from '@kubernetes/client-node';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import type { DrainOptionsInput } from '../../api/drain-options.js';
import { ensureNode, fakeNode } from '../../activities/providers/kwok-node.js';
import { ensureFakeNodeGroup } from '../../stack/kwok/nodes.js';
import { connectClient } from '../../starter/client.js';
import { temporalSettings } from '../../shared/temporal.js';
import { createWorker } from '../../worker/worker.js';
import { drainWorkflow } from '../../workflows/index.js';
import { byControlPlane, createNamespace, deleteGroupNodes, readAudit, testCluster, uniqueName, type AuditEvent, type TestCluster } from './cluster.js';
import { waitFor } from './wait.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';
import { DRAIN_LABEL } from '../../api/drain-plan.js';

export class DrainFixture {
  readonly c: TestCluster = testCluster();
  readonly group: string;
  readonly ns: string;
  readonly node: string;
  readonly startedAt = new Date();
  client!: Client;
  worker?: Worker;
  private running?: Promise<void>;
  readonly taskQueue: string;

  constructor(prefix: string) {
    this.group = uniqueName(prefix);
    this.ns = this.group;
    this.node = `${this.group}-0`;
    this.taskQueue = this.group;
  }

  async setup({ worker = true } = {}): Promise<this> {
    await ensureFakeNodeGroup(this.c.core, this.group, 1);
    await createNamespace(this.c, this.ns);
    this.client = await connectClient();
    if (worker) await this.startWorker();
    return this;
  }

  async startWorker(): Promise<void> {
    const { worker } = await createWorker({ deps: { kube: this.c }, settings: { ...temporalSettings(), taskQueue: this.taskQueue } });
    this.worker = worker;
    this.running = worker.run();
  }

  async teardown(): Promise<void> {
    this.worker?.shutdown();
    await this.running?.catch(() => undefined);
    await this.client?.connection.close();
    await this.c.core.deleteNamespace({ name: this.ns }).catch(() => undefined);
    await deleteGroupNodes(this.c, this.group);
  }

  /** A schedulable node for replacements, added once the workloads sit on the target node. */
  async addSpare(i = 1): Promise<string> {
    const name = `${this.group}-${i}`;
    await ensureNode(this.c.core, fakeNode({ name, nodeGroup: this.group }));
    return name;
  }

  podTemplate(labels: Record<string, string>, grace = 1, extra: { annotations?: Record<string, string>; restartPolicy?: string } = {}) {
    return {
      metadata: { labels, annotations: extra.annotations },
      spec: {
        nodeSelector: { [NODE_GROUP_LABEL]: this.group },
        terminationGracePeriodSeconds: grace,
        restartPolicy: extra.restartPolicy,
        containers: [{ name: 'c', image: 'registry.invalid/app:1' }],
      },
    };
  }

  async deploy(name: string, replicas: number, labels: Record<string, string> = {}, grace = 1): Promise<void> {
    const all = { app: name, ...labels };
    await this.c.apps.createNamespacedDeployment({
      namespace: this.ns,
      body: { metadata: { name }, spec: { replicas, selector: { matchLabels: { app: name } }, template: this.podTemplate(all, grace) } },
    });
  }

  /** A one-replica Deployment `name` whose pod tolerates every taint: its replacement is scheduled straight back onto the cordoned node. */
  async stickyDeployment(name: string): Promise<void> {
    const template = this.podTemplate({ app: name }, 1);
    await this.c.apps.createNamespacedDeployment({
      namespace: this.ns,
      body: { metadata: { name }, spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { ...template, spec: { ...template.spec, tolerations: [{ operator: 'Exists' }] } } } },
    });
  }

  /** A Job whose pod runs for `runFor` (kwok's complete stage) and is labelled for the drain to wait for it. */
  async waitCompletedJob(name: string, runFor: string): Promise<void> {
    await this.c.config.makeApiClient(BatchV1Api).createNamespacedJob({
      namespace: this.ns,
      body: {
        metadata: { name },
        spec: {
          backoffLimit: 0,
          template: this.podTemplate({ app: name, [DRAIN_LABEL]: 'wait-completed' }, 1, {
            annotations: { 'pod-complete.stage.kwok.x-k8s.io/delay': runFor },
            restartPolicy: 'Never',
          }) as never,
        },
      },
    });
  }

  async pdb(name: string, minAvailable: number, app = name): Promise<void> {
    await this.c.policy.createNamespacedPodDisruptionBudget({
      namespace: this.ns,
      body: { metadata: { name }, spec: { minAvailable, selector: { matchLabels: { app } } } },
    });
    await waitFor(`PDB ${name} status`, async () => {
      const p = await this.c.policy.readNamespacedPodDisruptionBudget({ name, namespace: this.ns });
      return p.status?.observedGeneration === p.metadata?.generation && (p.status?.currentHealthy ?? 0) >= minAvailable;
    });
  }

  async pods(selector?: string): Promise<V1Pod[]> {
    return (await this.c.core.listNamespacedPod({ namespace: this.ns, labelSelector: selector })).items;
  }

  /** Waits until `count` pods of the namespace run on the target node. */
  async waitRunning(count: number, selector?: string): Promise<V1Pod[]> {
    return waitFor(`${count} Running pods on ${this.node}`, async () => {
      const p = (await this.pods(selector)).filter((x) => x.status?.phase === 'Running' && x.spec?.nodeName === this.node && !x.metadata?.deletionTimestamp);
      return p.length === count && p;
    });
  }

  async startDrain(options?: DrainOptionsInput, id = uniqueName('drain')): Promise<WorkflowHandle<typeof drainWorkflow>> {
    return this.client.workflow.start(drainWorkflow, { taskQueue: this.taskQueue, workflowId: id, args: [{ nodeName: this.node, options }] });
  }

  /** Audit events of this test's namespace since the fixture started, in order. */
  async audit(): Promise<AuditEvent[]> {
    const since = this.startedAt.getTime();
    return (await readAudit()).filter((e) => e.objectRef?.namespace === this.ns && new Date(e.requestReceivedTimestamp).getTime() >= since);
  }
}

export const evictionsOf = (events: AuditEvent[]) => events.filter((e) => e.objectRef?.subresource === 'eviction' && e.verb === 'create');
/** Final removal of pods: kwok, playing the kubelet, deletes them at their grace deadline (the first such delete per pod). */
export const removalsOf = (events: AuditEvent[]) => {
  const first = new Map<string, AuditEvent>();
  for (const e of events) {
    if (e.objectRef?.resource !== 'pods' || e.objectRef.subresource || e.verb !== 'delete' || !/kwok/.test(e.userAgent ?? '')) continue;
    const k = `${e.objectRef.namespace}/${e.objectRef.name}`;
    const prev = first.get(k);
    if (!prev || e.requestReceivedTimestamp < prev.requestReceivedTimestamp) first.set(k, e);
  }
  return [...first.values()];
};
/** Deletions Slipway itself asked for (finished pods, the Delete policy, force-deletes). */
export const slipwayDeletionsOf = (events: AuditEvent[]) =>
  events.filter((e) => e.objectRef?.resource === 'pods' && !e.objectRef.subresource && e.verb === 'delete' && !byControlPlane(e));
