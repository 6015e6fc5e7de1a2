// What every kind of the bridge uses on a leadership term: only the leader writes (NotLeaderError,
// a quiet error its controller retries), the counts of what the bridge did (BridgeStats), a kind's
// controller, and the Event writer a kind's reconciler records its Events with.
import { CustomObjectsApi, type KubeConfig, type KubernetesObject } from '@kubernetes/client-node';
import type { EventInput } from '../../activities/events.js';
import { objectKey } from '../../kube/controller/cache.js';
import { Controller } from '../../kube/controller/controller.js';
import type { ListPage } from '../../kube/controller/reflector.js';
import { collectionPath, isGoneOrTerminating } from './kube-objects.js';
import { reconcileHooks } from './metrics.js';
import type { TrackerCounts } from './tracker.js';
import type { StatusEvent } from './workflow-status.js';
import { objectFields, type Log } from '../../shared/log.js';

export class NotLeaderError extends Error {
  constructor() {
    super('not the leader: not writing');
    this.name = 'NotLeaderError';
  }
}

export interface BridgeStats extends TrackerCounts {
  /** Start requests sent (a request for an ID already taken attaches to it: still one execution). */
  workflowsStarted: number;
  statusWrites: number;
  finalizersAdded: number;
  finalizersRemoved: number;
  cancels: number;
  nodeStatusesCreated: number;
  nodeStatusWrites: number;
  events: number;
  /** previewInputsChanged signals the preview feed sent. */
  previewSignals: number;
  /** nodeChanged signals the held nodes' feed sent (maintenance/held-nodes.ts). */
  nodeSignals: number;
}

export const emptyStats = (): BridgeStats => ({
  previewSignals: 0,
  nodeSignals: 0,
  workflowsStarted: 0,
  statusWrites: 0,
  finalizersAdded: 0,
  finalizersRemoved: 0,
  cancels: 0,
  nodeStatusesCreated: 0,
  nodeStatusWrites: 0,
  events: 0,
  statusQueries: 0,
  historyPolls: 0,
  taskChecks: 0,
});

/**
 * The resync of the kinds whose status follows a workflow (CycleNodeRequest, NodeMaintenance), and of
 * the orphan sweep: a safety net only, since every change reaches the reconciler by a watch event or
 * a tracker's notice. 30 s cost a reconcile per object twice a minute while nothing changed (about a
 * core-second per 30 s at 500 idle maintenances, #26 §1); budgets keep 30 s (their windows open and
 * close with time).
 */
export const WORKFLOW_KIND_RESYNC_MS = 5 * 60_000;

/** A kind's controller for one term: "not the leader" is quiet (retried, no log line); its reconciles are counted under the kind. */
export function kindController(kind: string, kc: KubeConfig, o: { concurrency?: number; resyncIntervalMs?: number; log: Log }): Controller {
  return new Controller({
    kind,
    kc,
    concurrency: o.concurrency,
    resyncIntervalMs: o.resyncIntervalMs,
    quietError: (err) => err instanceof NotLeaderError,
    ...reconcileHooks(kind),
    log: o.log,
  });
}

/** A cluster-scoped custom resource's collection, as a kind's controller watches it. */
export function clusterCollection<T extends KubernetesObject>(kc: KubeConfig, resource: { group: string; version: string; plural: string }) {
  const r = { group: resource.group, version: resource.version, plural: resource.plural };
  const custom = kc.makeApiClient(CustomObjectsApi);
  return {
    path: collectionPath(r),
    list: async (page: { limit: number; _continue?: string; labelSelector?: string }) => (await custom.listClusterCustomObject({ ...r, ...page })) as ListPage<T>,
  };
}

/** The shortest time between two status queries of one busy workflow. */
const QUERY_INTERVAL_MS = 250;

/** How a kind's trackers pace their status queries and task checks (tracker.ts), defaults filled in. */
export const trackerTimings = (o: { queryIntervalMs?: number; taskCheckIntervalMs?: number; queryTimeoutMs?: number }) => ({
  queryIntervalMs: o.queryIntervalMs ?? QUERY_INTERVAL_MS,
  taskCheckIntervalMs: o.taskCheckIntervalMs ?? 5000,
  queryTimeoutMs: o.queryTimeoutMs ?? 2000,
});

export interface EventWriterDeps {
  recordEvent: (e: EventInput) => Promise<void>;
  /** Checked before every write: only the leader writes. */
  isLeader: () => boolean;
  stats: Pick<BridgeStats, 'events'>;
  log: Log;
}

/** The object an Event is about (a cluster-scoped one has no namespace: its Events go to default, as for Nodes). */
export interface EventObject {
  metadata: { namespace?: string; name: string; uid?: string };
}

/**
 * Records a kind's Events on its objects, each once (the dedup key, with the object's uid, names the
 * Event: a retry writes nothing). Only the leader writes; an Event whose object or namespace is going
 * away is skipped, never retried.
 */
export function eventWriter(kind: string, apiVersion: string, d: EventWriterDeps): (obj: EventObject, ev: StatusEvent) => Promise<void> {
  return async (obj, ev) => {
    if (!d.isLeader()) throw new NotLeaderError();
    const { namespace, name, uid } = obj.metadata;
    try {
      await d.recordEvent({ involved: { kind, apiVersion, namespace, name, uid }, type: ev.type, reason: ev.reason, message: ev.message, dedupKey: `${uid}/${ev.dedup}` });
      d.stats.events++;
    } catch (err) {
      if (!isGoneOrTerminating(err)) throw err;
      const key = objectKey(namespace ?? '', name);
      d.log(`${key}: Event ${ev.reason} not recorded: the object or its namespace is going away`, objectFields(kind, key));
    }
  };
}
