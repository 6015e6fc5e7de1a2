// The bridge while it leads: a controller (starter/controller/) over CycleNodeRequests, with their
// CycleNodeStatus objects as a secondary collection and the running workflows' state (tracker.ts) as
// a source of changes from outside the cluster; the CycleNodeRequest reconciler does the rest.
// A new Bridge is built for each leadership term and stopped when it ends.
import type { Client } from '@temporalio/client';
import { createEventActivities } from '../../activities/events.js';
import type { Kube } from '../../activities/kube.js';
import { objectKey } from '../controller/cache.js';
import { Controller } from '../controller/controller.js';
import { REQUEST_LABEL } from './names.js';
import { CycleObjects, type CycleNodeRequestObject, type CycleNodeStatusObject } from './objects.js';
import { NotLeaderError, Reconciler, type BridgeStats } from './reconciler.js';
import { cycleWorkflows } from './temporal.js';
import { WorkflowTrackers } from './tracker.js';

export interface BridgeOptions {
  kube: Kube;
  client: Client;
  taskQueue: string;
  /** Watch only this namespace (default: all). */
  namespace?: string;
  /** How often running workflows are queried. */
  pollIntervalMs?: number;
  /** How often each running workflow (and its children) is checked for a failing workflow task. */
  taskCheckIntervalMs?: number;
  queryTimeoutMs?: number;
  /** Every request is reconciled at least this often (a safety net; a no-op when nothing changed). */
  resyncIntervalMs?: number;
  concurrency?: number;
  isLeader: () => boolean;
  stats: BridgeStats;
  log: (msg: string) => void;
}

export class Bridge {
  private readonly controller: Controller;
  private readonly trackers: WorkflowTrackers;
  private readonly reconciler: Reconciler;

  constructor(o: BridgeOptions) {
    const objects = new CycleObjects(o.kube.config, o.namespace);
    const controller = (this.controller = new Controller({
      kc: o.kube.config,
      concurrency: o.concurrency,
      resyncIntervalMs: o.resyncIntervalMs,
      quietError: (err) => err instanceof NotLeaderError,
      log: o.log,
    }));
    const requests = controller.watchPrimary<CycleNodeRequestObject>({ path: objects.requestsPath(), list: (p) => objects.listRequests(p) });
    const statuses = controller.watchSecondary<CycleNodeStatusObject>({
      path: objects.statusesPath(),
      list: (p) => objects.listStatuses(p),
      labelSelector: REQUEST_LABEL,
      ownerKey: (obj) => (obj.spec?.requestName ? objectKey(obj.metadata.namespace, obj.spec.requestName) : undefined),
    });
    const workflows = cycleWorkflows(o.client, o.taskQueue);
    this.trackers = new WorkflowTrackers(workflows, {
      pollIntervalMs: o.pollIntervalMs ?? 500,
      taskCheckIntervalMs: o.taskCheckIntervalMs ?? 5000,
      queryTimeoutMs: o.queryTimeoutMs ?? 2000,
      onChange: (key) => controller.enqueue(key),
      log: o.log,
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
    });
  }

  start(): void {
    this.controller.start(this.reconciler);
    this.trackers.start();
  }

  async stop(): Promise<void> {
    this.trackers.stop();
    await this.controller.stop();
  }
}
