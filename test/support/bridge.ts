// Fixtures for the CRD bridge's tests on the local stack: a namespace of CycleNodeRequests, the
// bridge run in-process on a private task queue (so no production worker picks its workflows up),
// a worker hosting the scripted cycle workflow, kubeconfigs for a proxy or a service account, and
// cleanup of everything created (finalizers removed, workflows terminated).
import { createServer, connect, type Server, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, CustomObjectsApi, KubeConfig, type CoreV1Event, type RequestContext } from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { apiStatus, createKube, type Kube } from '../../kube/client.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';
import { CYCLE_NODE_REQUEST, CYCLE_NODE_STATUS, type CycleNodeRequestSpecInput } from '../../api/cycle-node-request.js';
import { connectClient } from '../../starter/client.js';
import { startBridge, type RunningBridge, type StartBridgeOptions } from '../../starter/bridge/main.js';
import type { CycleNodeRequestObject, CycleNodeStatusObject } from '../../starter/bridge/cycle/objects.js';
import { ensureFakeNodeGroup } from '../../stack/kwok/nodes.js';
import { temporalSettings } from '../../shared/temporal.js';
import { createWorker } from '../../worker/worker.js';
import { createNamespace, deleteGroupNodes, testCluster, uniqueName, type TestCluster } from './cluster.js';
import { mergePatch } from '../../kube/patch.js';
import { waitFor } from './wait.js';
import { API_VERSION } from '../../api/names.js';

export const scriptedWorkflowsPath = () => fileURLToPath(new URL('./workflows/scripted-cycle.ts', import.meta.url));

export const validSpec = (group = 'it-bridge-group'): CycleNodeRequestSpecInput => ({
  nodeGroupName: group,
  selector: { matchLabels: { [NODE_GROUP_LABEL]: group } },
});

export class BridgeFixture {
  readonly c: TestCluster = testCluster();
  readonly custom: CustomObjectsApi = this.c.config.makeApiClient(CustomObjectsApi);
  readonly ns: string;
  readonly taskQueue: string;
  client!: Client;
  readonly logs: string[] = [];
  private readonly bridges = new Set<RunningBridge>();
  private readonly workers: { worker: Worker; running: Promise<void>; connection: NativeConnection }[] = [];
  private readonly workflowIds = new Set<string>();

  constructor(prefix: string) {
    this.ns = uniqueName(prefix);
    this.taskQueue = uniqueName(`${prefix}-tq`);
  }

  async setup(): Promise<this> {
    await createNamespace(this.c, this.ns);
    this.client = await connectClient();
    return this;
  }

  /** The bridge in this process, watching only this namespace, with its lease in it too. */
  async bridge(opts: Partial<StartBridgeOptions> & { tag?: string } = {}): Promise<RunningBridge> {
    const tag = opts.tag ?? 'bridge';
    const b = await startBridge({
      kube: this.c,
      client: this.client,
      taskQueue: this.taskQueue,
      namespace: this.ns,
      leaseNamespace: this.ns,
      retryIntervalMs: 500,
      // NodeMaintenances are cluster-wide: only a test about them reconciles them (on its private queue).
      maintenances: false,
      // The same for NodeDisruptionBudgets: only a test about their status keeps it current.
      budgets: false,
      log: (l) => this.logs.push(`${new Date().toISOString()} [${tag}] ${l}`),
      ...opts,
    });
    this.bridges.add(b);
    return b;
  }

  /** A bridge as `bridge()` starts it, once it holds its lease: the tests that drive workflows through it. */
  async leadingBridge(opts: Partial<StartBridgeOptions> & { tag?: string } = {}): Promise<RunningBridge> {
    const b = await this.bridge(opts);
    await waitFor('the bridge leads', async () => b.isLeader(), { timeoutMs: 40_000 });
    return b;
  }

  async stopBridge(b: RunningBridge): Promise<void> {
    await b.stop();
    this.bridges.delete(b);
  }

  /** Stops every bridge still running (after a failed test). */
  async stopBridges(): Promise<void> {
    for (const b of [...this.bridges]) await this.stopBridge(b).catch(() => undefined);
  }

  /** A worker hosting only the scripted cycleNodeRequestWorkflow (or the workflows of `workflowsPath`), on `taskQueue`. */
  async scriptedWorker(taskQueue = this.taskQueue, workflowsPath = scriptedWorkflowsPath()): Promise<void> {
    const settings = temporalSettings();
    const connection = await NativeConnection.connect(settings.connection);
    const worker = await Worker.create({ connection, namespace: settings.namespace, taskQueue, workflowsPath });
    this.workers.push({ worker, connection, running: worker.run() });
  }

  /** The production worker (every workflow and activity) on `taskQueue`; stopped by `teardown`. */
  async realWorker(taskQueue = this.taskQueue): Promise<void> {
    const { worker, connection } = await createWorker({ deps: { kube: this.c }, settings: { ...temporalSettings(), taskQueue } });
    this.workers.push({ worker, connection, running: worker.run() });
  }

  /** A kwok node group of `size` and a real worker on a private task queue for `body`; cleaned up after. */
  async cycleWorker(prefix: string, size: number, body: (c: { group: string; taskQueue: string; old: string[] }) => Promise<void>): Promise<void> {
    const group = uniqueName(prefix);
    const taskQueue = uniqueName(`${prefix}-tq`);
    const old = await ensureFakeNodeGroup(this.c.core, group, size);
    const { worker, connection } = await createWorker({ deps: { kube: this.c }, settings: { ...temporalSettings(), taskQueue } });
    const running = worker.run();
    try {
      await body({ group, taskQueue, old });
    } finally {
      await this.stopBridges();
      worker.shutdown();
      await running.catch(() => undefined);
      await connection.close();
      await deleteGroupNodes(this.c, group);
    }
  }

  async createCnr(name: string, spec: unknown, namespace = this.ns): Promise<CycleNodeRequestObject> {
    const { group, version, plural, kind } = CYCLE_NODE_REQUEST;
    const body = { apiVersion: API_VERSION, kind, metadata: { name, namespace }, spec };
    return (await this.custom.createNamespacedCustomObject({ group, version, plural, namespace, body })) as CycleNodeRequestObject;
  }

  async getCnr(name: string, namespace = this.ns): Promise<CycleNodeRequestObject | undefined> {
    const { group, version, plural } = CYCLE_NODE_REQUEST;
    try {
      const o = (await this.custom.getNamespacedCustomObject({ group, version, plural, namespace, name })) as CycleNodeRequestObject;
      if (o.status?.workflowId) this.workflowIds.add(o.status.workflowId);
      return o;
    } catch (err) {
      if (apiStatus(err) === 404) return undefined;
      throw err;
    }
  }

  async patchCnr(name: string, body: object, namespace = this.ns): Promise<void> {
    const { group, version, plural } = CYCLE_NODE_REQUEST;
    await this.custom.patchNamespacedCustomObject({ group, version, plural, namespace, name, body }, mergePatch);
  }

  async deleteCnr(name: string, namespace = this.ns): Promise<void> {
    const { group, version, plural } = CYCLE_NODE_REQUEST;
    await this.custom.deleteNamespacedCustomObject({ group, version, plural, namespace, name });
  }

  async nodeStatuses(namespace = this.ns): Promise<CycleNodeStatusObject[]> {
    const { group, version, plural } = CYCLE_NODE_STATUS;
    const l = (await this.custom.listNamespacedCustomObject({ group, version, plural, namespace })) as { items: CycleNodeStatusObject[] };
    return l.items;
  }

  async events(name: string, namespace = this.ns): Promise<CoreV1Event[]> {
    const l = await this.c.core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${name}` });
    return l.items;
  }

  /** How many executions (any run, any state) the server has for this workflow ID. */
  async executions(workflowId: string): Promise<number> {
    this.workflowIds.add(workflowId);
    let n = 0;
    for await (const _ of this.client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) n++;
    return n;
  }

  track(workflowId: string): void {
    this.workflowIds.add(workflowId);
  }

  async teardown(): Promise<void> {
    await this.stopBridges();
    for (const w of this.workers) {
      w.worker.shutdown();
      await w.running.catch(() => undefined);
      await w.connection.close();
    }
    // Leave nothing behind: requests without finalizers (so the namespace can go), workflows closed.
    const { group, version, plural } = CYCLE_NODE_REQUEST;
    const l = (await this.custom.listNamespacedCustomObject({ group, version, plural, namespace: this.ns }).catch(() => ({ items: [] }))) as { items: CycleNodeRequestObject[] };
    for (const o of l.items) {
      if (o.status?.workflowId) this.workflowIds.add(o.status.workflowId);
      if (o.metadata.finalizers?.length) await this.patchCnr(o.metadata.name, { metadata: { finalizers: null } }).catch(() => undefined);
    }
    for (const id of this.workflowIds) await this.client.workflow.getHandle(id).terminate('test cleanup').catch(() => undefined);
    await this.c.core.deleteNamespace({ name: this.ns }).catch(() => undefined);
    await deleteGroupNodes(this.c, this.ns); // the tests name their node group after the namespace
    await this.client?.connection.close();
  }

  dumpLogs(): string {
    return this.logs.join('\n');
  }
}

/** A kubeconfig like the tests' own, but reaching the apiserver at `server`. */
export function kubeConfigVia(server: string, base: KubeConfig = createKube().config): KubeConfig {
  const cluster = base.getCurrentCluster()!;
  const user = base.getCurrentUser()!;
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser({ ...cluster, server }, user);
  return kc;
}

/** A kubeconfig authenticating with a bearer token (a service account's). */
export function kubeConfigWithToken(token: string, base: KubeConfig = createKube().config): KubeConfig {
  const cluster = base.getCurrentCluster()!;
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser(cluster, { name: 'sa', token });
  return kc;
}

export const kubeFrom = (kc: KubeConfig): Kube => ({ config: kc, core: kc.makeApiClient(CoreV1Api) });

export interface ApiCall {
  method: string;
  /** Path and query, e.g. /apis/slipway.dev/v1alpha1/namespaces/ns/cyclenodestatuses. */
  path: string;
  at: number;
}

/**
 * A client like the tests' own that records every API call its clients make (method and path,
 * in order), so a test sees what the bridge asked the apiserver for, including refused calls,
 * which the audit log of the stack does not keep for custom resources.
 */
export function recordingKube(base: KubeConfig = createKube().config): Kube & { calls: ApiCall[] } {
  const calls: ApiCall[] = [];
  class RecordingKubeConfig extends KubeConfig {
    override async applySecurityAuthentication(context: RequestContext): Promise<void> {
      const u = new URL(context.getUrl());
      calls.push({ method: context.getHttpMethod().toString(), path: `${u.pathname}${u.search}`, at: Date.now() });
      return super.applySecurityAuthentication(context);
    }
  }
  const kc = new RecordingKubeConfig();
  kc.loadFromClusterAndUser(base.getCurrentCluster()!, base.getCurrentUser()!);
  return { ...createKube(kc), calls };
}

/**
 * A TCP proxy in front of the apiserver whose outage() drops every connection and refuses new ones
 * for a while: to the bridge it is an apiserver restart, without disturbing the shared stack.
 */
export class ApiserverProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly upstream: URL) {}

  async start(port = 0): Promise<void> {
    this.server = createServer((client) => {
      const up = connect(Number(this.upstream.port || 443), this.upstream.hostname);
      for (const s of [client, up]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => undefined);
      }
      client.pipe(up).pipe(client);
      client.on('close', () => up.destroy());
      up.on('close', () => client.destroy());
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.port = (this.server.address() as { port: number }).port;
  }

  get url(): string {
    return `https://127.0.0.1:${this.port}`;
  }

  /** Every connection reset and the port closed for `ms`, then back on the same port. */
  async outage(ms: number): Promise<void> {
    await this.stop();
    await new Promise((r) => setTimeout(r, ms));
    await this.start(this.port);
  }

  async stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    await closed;
  }
}

