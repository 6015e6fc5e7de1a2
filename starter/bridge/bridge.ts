// The bridge while it leads: one controller (kube/controller/) per kind. CycleNodeRequests, with
// their CycleNodeStatus objects as a secondary collection; NodeMaintenances (cluster-scoped, so the
// watched namespace does not apply). Each kind's running workflows (tracker.ts) are a source of
// changes from outside the cluster; each kind's reconciler does the rest. The Idle maintenances'
// previews are fed their changes by one set of watches (preview-feed.ts).
// A new Bridge is built for each leadership term and stopped when it ends.
import type { Client } from '@temporalio/client';
import { createEventActivities } from '../../activities/events.js';
import type { Kube } from '../../kube/client.js';
import { objectKey } from '../../kube/controller/cache.js';
import { Controller } from '../../kube/controller/controller.js';
import type { MaintenanceStatus } from '../../workflows/maintenance/types.js';
import { MaintenanceObjects, type NodeMaintenanceObject } from './maintenance-objects.js';
import { MaintenanceReconciler } from './maintenance-reconciler.js';
import { PreviewFeed } from './preview-feed.js';
import { nodeGroupTerm } from './node-group.js';
import { budgetTerm } from './budget.js';
import { isMaintenanceStatus } from './maintenance-status.js';
import { maintenanceWorkflows } from './maintenance-temporal.js';
import { CycleObjects, type CycleNodeRequestObject, type CycleNodeStatusObject } from './objects.js';
import { NotLeaderError, Reconciler, type BridgeStats } from './reconciler.js';
import { isCycleStatus } from './status.js';
import { cycleWorkflows } from './temporal.js';
import { WorkflowTrackers } from './tracker.js';
import { cycleStateSeen, mirrorLag, reconcileHooks, reconcileKindsKnown, setBridgeView, type BridgeView } from './metrics.js';
import type { Log } from '../../shared/log.js';
import { CYCLE_REQUEST_LABEL } from '../../api/cycle-node-request.js';

/** The shortest time between two status queries of one busy workflow. */
const QUERY_INTERVAL_MS = 250;

export interface BridgeOptions {
  kube: Kube;
  client: Client;
  taskQueue: string;
  /** Watch only this namespace's CycleNodeRequests (default: all). */
  namespace?: string;
  /** Act only on requests in these namespaces, refusing others with an Event (default: all watched). */
  allowedNamespaces?: readonly string[];
  /** Reconcile NodeMaintenances too (default true). */
  maintenances?: boolean;
  /** Run NodeGroups' drift observers too (default true). */
  nodeGroups?: boolean;
  /** Keep NodeDisruptionBudgets' status current too (default true). */
  budgets?: boolean;
  /** Only the NodeMaintenances with these labels (a label selector; default: all). */
  maintenanceSelector?: string;
  /** A running maintenance workflow without an object is told it was deleted once it is this old (default 60 s). */
  orphanGraceMs?: number;
  /** At most one status query per running workflow per this interval (sent only after its workflow tasks; default 250 ms). */
  queryIntervalMs?: number;
  /** How often a running workflow with children, task trouble or failing queries is checked for a failing workflow task. */
  taskCheckIntervalMs?: number;
  queryTimeoutMs?: number;
  /** Every request is reconciled at least this often (a safety net; a no-op when nothing changed). */
  resyncIntervalMs?: number;
  concurrency?: number;
  isLeader: () => boolean;
  stats: BridgeStats;
  log: Log;
}

export class Bridge {
  private readonly controller: Controller;
  private readonly view: BridgeView;
  private readonly trackers: WorkflowTrackers;
  private readonly reconciler: Reconciler;
  private readonly maintenance?: ReturnType<typeof maintenanceTerm>;
  private readonly nodeGroups?: ReturnType<typeof nodeGroupTerm>;
  private readonly budgets?: ReturnType<typeof budgetTerm>;
  private sweep?: NodeJS.Timeout;

  constructor(private readonly o: BridgeOptions) {
    const objects = new CycleObjects(o.kube.config, o.namespace);
    const controller = (this.controller = new Controller({
      kind: 'CycleNodeRequest',
      kc: o.kube.config,
      concurrency: o.concurrency,
      resyncIntervalMs: o.resyncIntervalMs,
      quietError: (err) => err instanceof NotLeaderError,
      ...reconcileHooks('CycleNodeRequest'),
      log: o.log,
    }));
    const requests = controller.watchPrimary<CycleNodeRequestObject>({ path: objects.requestsPath(), list: (p) => objects.listRequests(p) });
    const statuses = controller.watchSecondary<CycleNodeStatusObject>({
      path: objects.statusesPath(),
      list: (p) => objects.listStatuses(p),
      labelSelector: CYCLE_REQUEST_LABEL,
      ownerKey: (obj) => (obj.spec?.requestName ? objectKey(obj.metadata.namespace, obj.spec.requestName) : undefined),
    });
    const workflows = cycleWorkflows(o.client, o.taskQueue);
    this.trackers = new WorkflowTrackers(workflows, {
      isState: isCycleStatus,
      queryName: 'cycleStatus',
      queryIntervalMs: o.queryIntervalMs ?? QUERY_INTERVAL_MS,
      taskCheckIntervalMs: o.taskCheckIntervalMs ?? 5000,
      queryTimeoutMs: o.queryTimeoutMs ?? 2000,
      onChange: (key) => controller.enqueue(key),
      onState: (uid, state) => cycleStateSeen(uid, state),
      onLag: (ms) => mirrorLag.observe({ kind: 'CycleNodeRequest' }, ms / 1000),
      log: o.log,
      counts: o.stats,
    });
    this.reconciler = new Reconciler({
      requests,
      statuses,
      objects,
      workflows,
      trackers: this.trackers,
      recordEvent: createEventActivities(o.kube).recordEvent,
      isLeader: o.isLeader,
      stats: o.stats,
      log: o.log,
      allowedNamespaces: o.allowedNamespaces,
    });
    const maintenance = o.maintenances !== false ? maintenanceTerm(o) : undefined;
    this.maintenance = maintenance;
    const nodeGroups = (this.nodeGroups = o.nodeGroups !== false ? nodeGroupTerm({ kc: o.kube.config, client: o.client, taskQueue: o.taskQueue, resyncIntervalMs: o.resyncIntervalMs, isLeader: o.isLeader, log: o.log }) : undefined);
    const budgets = (this.budgets = o.budgets !== false ? budgetTerm({ kube: o.kube, kc: o.kube.config, client: o.client, resyncIntervalMs: o.resyncIntervalMs, isLeader: o.isLeader, recordEvent: createEventActivities(o.kube).recordEvent, log: o.log }) : undefined);
    // What a scrape reads (starter/bridge/metrics.ts): the caches as they are, no copy.
    this.view = {
      requests: () => requests.values(),
      maintenances: () => maintenance?.maintenances.values() ?? [],
      budgets: () => budgets?.budgets.values() ?? [],
      queueDepth: () => ({
        CycleNodeRequest: controller.queueDepth(),
        ...(maintenance ? { NodeMaintenance: maintenance.controller.queueDepth() } : {}),
        ...(nodeGroups ? { NodeGroup: nodeGroups.controller.queueDepth() } : {}),
        ...(budgets ? { NodeDisruptionBudget: budgets.controller.queueDepth() } : {}),
      }),
      synced: () => this.isSynced(),
    };
  }

  /** Every cache of this term holds a full list (the bridge's readiness while it leads). */
  isSynced(): boolean {
    return this.controller.isSynced() && (this.maintenance?.controller.isSynced() ?? true) && (this.nodeGroups?.controller.isSynced() ?? true) && (this.budgets?.controller.isSynced() ?? true);
  }

  start(): void {
    setBridgeView(this.view);
    // The kinds' error series exist from the start (at 0), as Prometheus conventions want.
    reconcileKindsKnown(Object.keys(this.view.queueDepth()));
    this.controller.start(this.reconciler);
    this.trackers.start();
    if (this.nodeGroups) this.nodeGroups.controller.start(this.nodeGroups.reconciler);
    if (this.budgets) this.budgets.controller.start(this.budgets.reconciler);
    if (this.maintenance) {
      const m = this.maintenance;
      m.controller.start(m.reconciler);
      m.trackers.start();
      let sweeping = false;
      this.sweep = setInterval(() => {
        if (sweeping || !m.controller.isSynced() || !this.o.isLeader()) return;
        sweeping = true;
        m.reconciler
          .sweep(this.o.orphanGraceMs ?? 60_000)
          .catch((err: unknown) => {
            if (!(err instanceof NotLeaderError)) this.o.log(`looking for maintenance workflows without an object: ${err instanceof Error ? err.message : String(err)}`, { level: 'warn' });
          })
          .finally(() => {
            sweeping = false;
          });
      }, this.o.resyncIntervalMs ?? 30_000);
    }
  }

  async stop(): Promise<void> {
    setBridgeView(undefined, this.view);
    if (this.sweep) clearInterval(this.sweep);
    this.trackers.stop();
    this.maintenance?.trackers.stop();
    await Promise.all([this.controller.stop(), this.maintenance?.controller.stop(), this.maintenance?.previewFeed.close(), this.nodeGroups?.controller.stop(), this.budgets?.controller.stop()]);
  }
}

/** The NodeMaintenance kind: its own controller, trackers and reconciler, on the same term. */
function maintenanceTerm(o: BridgeOptions) {
  const objects = new MaintenanceObjects(o.kube.config);
  const controller = new Controller({
    kind: 'NodeMaintenance',
    kc: o.kube.config,
    concurrency: o.concurrency,
    resyncIntervalMs: o.resyncIntervalMs,
    quietError: (err) => err instanceof NotLeaderError,
    ...reconcileHooks('NodeMaintenance'),
    log: o.log,
  });
  const maintenances = controller.watchPrimary<NodeMaintenanceObject>({ path: objects.path(), list: (p) => objects.list(p), labelSelector: o.maintenanceSelector });
  const workflows = maintenanceWorkflows(o.client, o.taskQueue);
  const trackers = new WorkflowTrackers<MaintenanceStatus>(workflows, {
    isState: isMaintenanceStatus,
    queryName: 'maintenanceStatus',
    queryIntervalMs: o.queryIntervalMs ?? QUERY_INTERVAL_MS,
    taskCheckIntervalMs: o.taskCheckIntervalMs ?? 5000,
    queryTimeoutMs: o.queryTimeoutMs ?? 2000,
    onChange: (key) => controller.enqueue(key),
    onLag: (ms) => mirrorLag.observe({ kind: 'NodeMaintenance' }, ms / 1000),
    log: o.log,
    counts: o.stats,
  });
  const previewFeed = new PreviewFeed({ kube: o.kube, tell: (id) => workflows.previewInputsChanged(id), isLeader: o.isLeader, stats: o.stats, log: o.log });
  const reconciler = new MaintenanceReconciler({
    maintenances,
    objects,
    workflows,
    trackers,
    previewFeed,
    recordEvent: createEventActivities(o.kube).recordEvent,
    isLeader: o.isLeader,
    stats: o.stats,
    log: o.log,
  });
  return { controller, trackers, reconciler, maintenances, previewFeed };
}
