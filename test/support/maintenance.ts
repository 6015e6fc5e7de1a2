// Fixtures for NodeMaintenance tests on the local stack: a kwok node group, a namespace, pods
// pinned to given nodes with given priorities (PriorityClasses made per test), NodeMaintenance
// objects, their workflows started as the bridge would (one per object), the bridge's held-nodes
// feed telling the coordinators of the fixture's nodes (`nodes`, which a test may add to) of an
// uncordon, a claim, a deletion, an
// in-process worker on a private task queue, and readers of the audit log.
import { CustomObjectsApi, SchedulingV1Api, type V1Pod, type V1PodSpec } from '@kubernetes/client-node';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { GROUP, VERSION } from '../../api/crd.js';
import { HELD_BY_ANNOTATION, MAINTENANCE_FINALIZER, NODE_MAINTENANCE, type NodeMaintenanceSpecInput } from '../../api/node-maintenance.js';
import { ensureFakeNodeGroup } from '../../stack/kwok/nodes.js';
import { connectClient } from '../../starter/client.js';
import { temporalSettings } from '../../shared/temporal.js';
import { createWorker } from '../../worker/worker.js';
import { maintenanceDrainWorkflowId, maintenanceWorkflowId, maintenanceNodeWorkflowId } from '../../workflows/ids.js';
import { nodeMaintenanceWorkflow } from '../../workflows/index.js';
import { maintenanceStatusQuery } from '../../workflows/messages.js';
import type { MaintenanceStatus } from '../../workflows/maintenance/types.js';
import { createNamespace, deleteGroupNodes, readAudit, testCluster, uniqueName, type AuditEvent, type TestCluster } from './cluster.js';
import { mergePatch } from '../../kube/patch.js';
import { waitFor } from './wait.js';
import { API_VERSION } from '../../api/names.js';
import { HeldNodeFeed } from '../../starter/bridge/maintenance/held-nodes.js';
import { nodeChangedSignal } from '../../workflows/messages.js';

export class MaintenanceFixture {
  readonly c: TestCluster = testCluster();
  readonly group: string;
  readonly ns: string;
  readonly startedAt = new Date();
  readonly objects: CustomObjectsApi;
  readonly scheduling: SchedulingV1Api;
  client!: Client;
  worker?: Worker;
  nodes: string[] = [];
  private running?: Promise<void>;
  private heldNodes?: HeldNodeFeed;
  /** nodeChanged signals the held-nodes feed sent. */
  readonly feedStats = { nodeSignals: 0 };
  private readonly classes = new Set<string>();
  private readonly maintenances = new Map<string, string>();

  constructor(prefix: string) {
    this.group = uniqueName(prefix);
    this.ns = this.group;
    this.objects = this.c.config.makeApiClient(CustomObjectsApi);
    this.scheduling = this.c.config.makeApiClient(SchedulingV1Api);
  }

  /** The group of the bystander node (see setup). */
  get bystanders(): string {
    return `${this.group}-by`;
  }

  /** `worker: false` leaves the task queue (the group's name) to a worker the test runs itself. */
  async setup(nodes: number, { worker: inProcess = true } = {}): Promise<this> {
    this.nodes = await ensureFakeNodeGroup(this.c.core, this.group, nodes);
    // A node no test selects: a selector over all of this fixture's nodes must not be "every node in
    // the cluster" (NM-4.8), whatever else the cluster holds (on a fresh stack, nothing).
    await ensureFakeNodeGroup(this.c.core, this.bystanders, 1);
    await createNamespace(this.c, this.ns);
    this.client = await connectClient();
    const client = this.client;
    this.heldNodes = new HeldNodeFeed({
      kube: this.c,
      // Only this fixture's nodes: other tests' coordinators on the shared stack are theirs to tell.
      tell: async (node) => this.nodes.includes(node) && client.workflow.getHandle(maintenanceNodeWorkflowId(node)).signal(nodeChangedSignal).then(() => true, () => false),
      isLeader: () => true,
      stats: this.feedStats,
      log: () => undefined,
    });
    this.heldNodes.start();
    if (!inProcess) return this;
    const { worker } = await createWorker({ deps: { kube: this.c }, settings: { ...temporalSettings(), taskQueue: this.group } });
    this.worker = worker;
    this.running = worker.run();
    return this;
  }

  async teardown(): Promise<void> {
    for (const [name, id] of this.maintenances) {
      await this.client.workflow.getHandle(id).terminate('test over').catch(() => undefined);
      await this.objects.patchClusterCustomObject({ ...this.where(name), body: { metadata: { finalizers: null } } }, mergePatch).catch(() => undefined);
      await this.objects.deleteClusterCustomObject(this.where(name)).catch(() => undefined);
    }
    for (const n of this.nodes) {
      await this.client.workflow.getHandle(maintenanceNodeWorkflowId(n)).terminate('test over').catch(() => undefined);
      await this.client.workflow.getHandle(maintenanceDrainWorkflowId(n)).terminate('test over').catch(() => undefined);
    }
    await this.heldNodes?.close();
    this.worker?.shutdown();
    await this.running?.catch(() => undefined);
    await this.client?.connection.close();
    await this.c.core.deleteNamespace({ name: this.ns }).catch(() => undefined);
    for (const name of this.classes) await this.scheduling.deletePriorityClass({ name }).catch(() => undefined);
    await deleteGroupNodes(this.c, this.group);
    await deleteGroupNodes(this.c, this.bystanders);
  }

  private where(name: string) {
    return { group: GROUP, version: VERSION, plural: NODE_MAINTENANCE.plural, name };
  }

  /** A PriorityClass of this value (made once per test). */
  async priorityClass(value: number): Promise<string> {
    const name = `${this.group}-p${value}`;
    if (!this.classes.has(name)) {
      await this.scheduling.createPriorityClass({ body: { metadata: { name }, value } });
      this.classes.add(name);
    }
    return name;
  }

  /** A one-replica Deployment `name` whose pod runs on `node` with this priority, labels and annotations (and `spec`'s extra fields). */
  async pod(name: string, node: string, priority: number, labels: Record<string, string> = {}, spec: Partial<V1PodSpec> = {}, annotations?: Record<string, string>): Promise<void> {
    const priorityClassName = priority ? await this.priorityClass(priority) : undefined;
    await this.c.apps.createNamespacedDeployment({
      namespace: this.ns,
      body: {
        metadata: { name },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name, ...labels }, annotations },
            spec: {
              nodeSelector: { 'kubernetes.io/hostname': node },
              priorityClassName,
              terminationGracePeriodSeconds: 1,
              containers: [{ name: 'c', image: 'registry.invalid/app:1' }],
              ...spec,
            },
          },
        },
      },
    });
  }

  /**
   * Until `node` is held by maintenance `name` (its held-by annotation names it). A test whose second
   * maintenance must find the first on a shared node waits for this: targets never shrink (NM-3.3), so
   * whichever registers first sets the node's first targets.
   */
  async waitHeld(node: string, name: string): Promise<void> {
    await waitFor(`${node} held by ${name}`, async () => ((await this.c.core.readNode({ name: node })).metadata?.annotations?.[HELD_BY_ANNOTATION] ?? '').split(',').includes(name), { timeoutMs: 60_000 });
  }

  async pods(): Promise<V1Pod[]> {
    return (await this.c.core.listNamespacedPod({ namespace: this.ns })).items;
  }

  async waitRunning(count: number): Promise<V1Pod[]> {
    return waitFor(`${count} Running pods`, async () => {
      const p = (await this.pods()).filter((x) => x.status?.phase === 'Running' && !x.metadata?.deletionTimestamp);
      return p.length === count && p;
    });
  }

  get taskQueue(): string {
    return this.group;
  }

  /** Waits until one pod of each of these Deployments runs (tests sharing the namespace count their own). */
  async waitApps(apps: string[]): Promise<V1Pod[]> {
    return waitFor(`pods of ${apps.join(', ')} Running`, async () => {
      const p = (await this.pods()).filter((x) => x.status?.phase === 'Running' && !x.metadata?.deletionTimestamp && apps.includes(appOf(x.metadata?.name)));
      return p.length === apps.length && p;
    });
  }

  /** A PDB that refuses every eviction of this Deployment's pods, once the disruption controller has computed it. */
  async blockingPdb(app: string): Promise<void> {
    await this.c.policy.createNamespacedPodDisruptionBudget({ namespace: this.ns, body: { metadata: { name: app }, spec: { maxUnavailable: 0, selector: { matchLabels: { app } } } } });
    await waitFor(`PDB ${app} computed`, async () => (await this.c.policy.readNamespacedPodDisruptionBudget({ name: app, namespace: this.ns })).status?.observedGeneration === 1);
  }

  /** Creates the object (with `labels`) and starts its workflow as the bridge does (ID nm/<name>/<uid>). */
  async create(name: string, spec: NodeMaintenanceSpecInput, labels?: Record<string, string>): Promise<WorkflowHandle<typeof nodeMaintenanceWorkflow>> {
    const obj = (await this.objects.createClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: NODE_MAINTENANCE.plural,
      body: { apiVersion: API_VERSION, kind: NODE_MAINTENANCE.kind, metadata: { name, labels }, spec },
    })) as { metadata: { uid: string; creationTimestamp: string; generation: number }; spec: NodeMaintenanceSpecInput };
    const id = maintenanceWorkflowId({ name, uid: obj.metadata.uid });
    this.maintenances.set(name, id);
    return this.client.workflow.start(nodeMaintenanceWorkflow, {
      taskQueue: this.group,
      workflowId: id,
      workflowIdConflictPolicy: 'USE_EXISTING', // a bridge on this queue may have started it first, as the bridge would

      args: [{ name, uid: obj.metadata.uid, createdAt: obj.metadata.creationTimestamp, spec: obj.spec, generation: obj.metadata.generation }],
    });
  }

  async object(name: string): Promise<{ metadata: { finalizers?: string[] }; spec: { stage?: string } }> {
    return (await this.objects.getClusterCustomObject(this.where(name))) as { metadata: { finalizers?: string[] }; spec: { stage?: string } };
  }

  hasFinalizer = async (name: string) => ((await this.object(name)).metadata.finalizers ?? []).includes(MAINTENANCE_FINALIZER);

  async statusWhen(h: WorkflowHandle, what: string, ok: (s: MaintenanceStatus) => boolean, timeoutMs = 90_000): Promise<MaintenanceStatus> {
    return waitFor(what, async () => {
      const s = await h.query(maintenanceStatusQuery);
      return ok(s) ? s : undefined;
    }, { timeoutMs, intervalMs: 250 });
  }

  /** Audit events since the fixture started, in order. */
  async audit(): Promise<AuditEvent[]> {
    const since = this.startedAt.getTime();
    return (await readAudit()).filter((e) => new Date(e.requestReceivedTimestamp).getTime() >= since);
  }

  /** Evictions the apiserver accepted in this namespace (pod names, in order). */
  async evictions(): Promise<AuditEvent[]> {
    return (await this.audit()).filter((e) => e.objectRef?.namespace === this.ns && e.objectRef.subresource === 'eviction' && e.responseStatus?.code === 201);
  }
}

/** The Deployment a pod belongs to (its app label). */
export const appOf = (name: string | undefined) => name?.replace(/-[a-z0-9]+-[a-z0-9]+$/, '') ?? '';
