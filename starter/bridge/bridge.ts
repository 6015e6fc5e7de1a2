// The bridge while it leads: watches CycleNodeRequests and CycleNodeStatuses into caches, queues
// every changed request, follows the running workflows, and reconciles each request serially.
// A new Bridge is built for each leadership term and stopped when it ends.
import type { Client } from '@temporalio/client';
import { createEventActivities } from '../../activities/events.js';
import type { Kube } from '../../activities/kube.js';
import { ObjectCache, keyOf } from './cache.js';
import { objectKey, REQUEST_LABEL } from './names.js';
import { CycleObjects, type CycleNodeRequestObject, type CycleNodeStatusObject } from './objects.js';
import { KeyedQueue } from './queue.js';
import { NotLeaderError, Reconciler, type BridgeStats } from './reconciler.js';
import { runReflector } from './reflector.js';
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
  private readonly requests = new ObjectCache<CycleNodeRequestObject>();
  private readonly statuses = new ObjectCache<CycleNodeStatusObject>();
  private readonly abort = new AbortController();
  private readonly objects: CycleObjects;
  private readonly queue: KeyedQueue;
  private readonly trackers: WorkflowTrackers;
  private readonly reflectors: Promise<void>[] = [];
  private resync: NodeJS.Timeout | undefined;
  private synced = { requests: false, statuses: false };

  constructor(private readonly o: BridgeOptions) {
    const objects = (this.objects = new CycleObjects(o.kube.config, o.namespace));
    const workflows = cycleWorkflows(o.client, o.taskQueue);
    this.trackers = new WorkflowTrackers(workflows, {
      pollIntervalMs: o.pollIntervalMs ?? 500,
      taskCheckIntervalMs: o.taskCheckIntervalMs ?? 5000,
      queryTimeoutMs: o.queryTimeoutMs ?? 2000,
      onChange: (key) => this.enqueue(key),
      log: o.log,
    });
    const reconciler = new Reconciler({
      requests: this.requests,
      statuses: this.statuses,
      objects,
      workflows,
      trackers: this.trackers,
      recordEvent: createEventActivities(o.kube).recordEvent,
      isLeader: o.isLeader,
      stats: o.stats,
      log: o.log,
    });
    this.queue = new KeyedQueue((key) => reconciler.reconcile(key), {
      concurrency: o.concurrency ?? 8,
      onError: (key, err, retryIn) => {
        if (err instanceof NotLeaderError) return;
        o.log(`${key}: reconcile failed: ${err instanceof Error ? err.message : String(err)} (retry in ${retryIn} ms)`);
      },
    });
  }

  start(): void {
    const { signal } = this.abort;
    const log = this.o.log;
    this.reflectors.push(
      runReflector<CycleNodeRequestObject>({
        kc: this.o.kube.config,
        path: this.objects.requestsPath(),
        list: (p) => this.objects.listRequests(p),
        signal,
        log,
        onSync: (items) => {
          for (const k of this.requests.replace(items)) this.enqueue(k);
          this.synced.requests = true;
          for (const k of this.requests.keys()) this.enqueue(k);
        },
        onEvent: (type, obj) => {
          if (type === 'DELETED') this.requests.delete(obj);
          else this.requests.put(obj);
          this.enqueue(keyOf(obj));
        },
      }),
      runReflector<CycleNodeStatusObject>({
        kc: this.o.kube.config,
        path: this.objects.statusesPath(),
        list: (p) => this.objects.listStatuses(p),
        labelSelector: REQUEST_LABEL,
        signal,
        log,
        onSync: (items) => {
          this.statuses.replace(items);
          this.synced.statuses = true;
          for (const k of this.requests.keys()) this.enqueue(k);
        },
        onEvent: (type, obj) => {
          if (type === 'DELETED') this.statuses.delete(obj);
          else this.statuses.put(obj);
          if (obj.spec?.requestName) this.enqueue(objectKey(obj.metadata.namespace, obj.spec.requestName));
        },
      }),
    );
    this.trackers.start();
    this.resync = setInterval(() => {
      for (const k of this.requests.keys()) this.enqueue(k);
    }, this.o.resyncIntervalMs ?? 30_000);
  }

  /** Reconciles only once both caches hold a full list (so "missing" means missing). */
  private enqueue(key: string): void {
    if (this.synced.requests && this.synced.statuses) this.queue.add(key);
  }

  async stop(): Promise<void> {
    this.abort.abort();
    if (this.resync) clearInterval(this.resync);
    this.trackers.stop();
    await this.queue.close();
    await Promise.allSettled(this.reflectors);
  }
}
