// Fixtures for node-cycling tests: a node group, a namespace with an app and its PDB, a watcher
// that records the app's available pods over time, and a worker on a private task queue.
import { Watch, type V1Node, type V1Pod } from '@kubernetes/client-node';
import { DETACHED_FROM_GROUP } from '../../api/node-groups.js';
import type { Client } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import type { CycleNodeRequestSpecInput } from '../../api/cycle-node-request.js';
import { connectClient } from '../../starter/client.js';
import { temporalSettings } from '../../shared/temporal.js';
import { createWorker } from '../../worker/worker.js';
import { cycleWorkflowId } from '../../workflows/cycle/types.js';
import { cycleNodeRequestWorkflow } from '../../workflows/index.js';
import { createNamespace, deleteGroupNodes, testCluster, uniqueName, type TestCluster } from './cluster.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

/** An app spread over a node group's nodes, with a PDB the cycle must respect. */
export async function deployApp(
  c: TestCluster,
  ns: string,
  group: string,
  replicas: number,
  pdb: { minAvailable?: number; maxUnavailable?: number },
  grace = 1,
): Promise<void> {
  await c.apps.createNamespacedDeployment({
    namespace: ns,
    body: {
      metadata: { name: 'app' },
      spec: {
        replicas,
        selector: { matchLabels: { app: 'app' } },
        template: {
          metadata: { labels: { app: 'app' } },
          spec: {
            nodeSelector: { [NODE_GROUP_LABEL]: group },
            terminationGracePeriodSeconds: grace,
            topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { app: 'app' } } }],
            containers: [{ name: 'c', image: 'registry.invalid/app:1' }],
          },
        },
      },
    },
  });
  await c.policy.createNamespacedPodDisruptionBudget({
    namespace: ns,
    body: { metadata: { name: 'app' }, spec: { ...pdb, selector: { matchLabels: { app: 'app' } } } },
  });
}

export class CycleFixture {
  readonly c: TestCluster = testCluster();
  readonly group: string;
  readonly ns: string;
  readonly taskQueue: string;
  client!: Client;
  private worker?: Worker;
  private running?: Promise<void>;
  private stopWatch?: AbortController;
  /** Lowest number of available app pods seen since watchApp(). */
  minAvailable = Infinity;
  /** Most nodes of the group detached (in flight) at once, since watchDetached(). */
  maxDetached = 0;
  private stopNodeWatch?: AbortController;

  constructor(prefix: string) {
    this.group = uniqueName(prefix);
    this.ns = this.group;
    this.taskQueue = this.group;
  }

  async setup(): Promise<this> {
    await createNamespace(this.c, this.ns);
    this.client = await connectClient();
    const { worker } = await createWorker({ deps: { kube: this.c }, settings: { ...temporalSettings(), taskQueue: this.taskQueue } });
    this.worker = worker;
    this.running = worker.run();
    return this;
  }

  async teardown(): Promise<void> {
    this.stopWatch?.abort();
    this.stopNodeWatch?.abort();
    this.worker?.shutdown();
    await this.running?.catch(() => undefined);
    await this.client?.connection.close();
    await this.c.core.deleteNamespace({ name: this.ns }).catch(() => undefined);
    await deleteGroupNodes(this.c, this.group);
  }

  async app(replicas: number, minAvailable: number, grace = 1): Promise<void> {
    await deployApp(this.c, this.ns, this.group, replicas, { minAvailable }, grace);
  }

  /** Records the minimum of available app pods (Running, Ready, not terminating) from a watch. */
  async watchApp(): Promise<void> {
    const pods = new Map<string, V1Pod>();
    const available = () => [...pods.values()].filter((p) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp && p.status.conditions?.some((x) => x.type === 'Ready' && x.status === 'True')).length;
    const list = await this.c.core.listNamespacedPod({ namespace: this.ns, labelSelector: 'app=app' });
    for (const p of list.items) pods.set(p.metadata!.uid!, p);
    this.minAvailable = available();
    this.stopWatch = await new Watch(this.c.config).watch(
      `/api/v1/namespaces/${this.ns}/pods`,
      { labelSelector: 'app=app', resourceVersion: list.metadata?.resourceVersion },
      (type, p: V1Pod) => {
        if (type === 'DELETED') pods.delete(p.metadata!.uid!);
        else pods.set(p.metadata!.uid!, p);
        this.minAvailable = Math.min(this.minAvailable, available());
      },
      () => undefined,
    );
  }

  /** Records the most nodes of this group carrying the cycle's detached marker at the same time. */
  async watchDetached(): Promise<void> {
    const detached = new Set<string>();
    const list = await this.c.core.listNode();
    this.stopNodeWatch = await new Watch(this.c.config).watch(
      '/api/v1/nodes',
      { resourceVersion: list.metadata?.resourceVersion },
      (type, n: V1Node) => {
        const name = n.metadata!.name!;
        if (type !== 'DELETED' && n.metadata?.annotations?.[DETACHED_FROM_GROUP] === this.group) detached.add(name);
        else detached.delete(name);
        this.maxDetached = Math.max(this.maxDetached, detached.size);
      },
      () => undefined,
    );
  }

  start(spec: Partial<CycleNodeRequestSpecInput> & Pick<CycleNodeRequestSpecInput, 'selector'>, name = 'cnr') {
    const request = { namespace: this.ns, name, uid: uniqueName('uid') };
    return this.client.workflow.start(cycleNodeRequestWorkflow, {
      taskQueue: this.taskQueue,
      workflowId: cycleWorkflowId(request),
      args: [{ request, spec: { nodeGroupName: this.group, ...spec } }],
    });
  }
}
