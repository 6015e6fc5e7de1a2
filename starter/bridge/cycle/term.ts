// The CycleNodeRequest kind for one leadership term: its controller (CycleNodeStatus objects as a
// secondary collection), its running workflows' trackers and its reconciler.
import { createEventActivities } from '../../../activities/events.js';
import { objectKey } from '../../../kube/controller/cache.js';
import type { BridgeOptions } from '../bridge.js';
import { kindController, trackerTimings, WORKFLOW_KIND_RESYNC_MS } from '../kit.js';
import { cycleStateSeen, mirrorLag } from '../metrics.js';
import { WorkflowTrackers } from '../tracker.js';
import { CYCLE_REQUEST_LABEL } from '../../../api/cycle-node-request.js';
import { CycleObjects, type CycleNodeRequestObject, type CycleNodeStatusObject } from './objects.js';
import { Reconciler } from './reconciler.js';
import { isCycleStatus } from './status.js';
import { cycleWorkflows } from './temporal.js';

export function cycleTerm(o: BridgeOptions) {
  const objects = new CycleObjects(o.kube.config, o.namespace);
  const controller = kindController('CycleNodeRequest', o.kube.config, { ...o, resyncIntervalMs: o.resyncIntervalMs ?? WORKFLOW_KIND_RESYNC_MS });
  const requests = controller.watchPrimary<CycleNodeRequestObject>({ path: objects.requestsPath(), list: (p) => objects.listRequests(p) });
  const statuses = controller.watchSecondary<CycleNodeStatusObject>({
    path: objects.statusesPath(),
    list: (p) => objects.listStatuses(p),
    labelSelector: CYCLE_REQUEST_LABEL,
    ownerKey: (obj) => (obj.spec?.requestName ? objectKey(obj.metadata.namespace, obj.spec.requestName) : undefined),
  });
  const workflows = cycleWorkflows(o.client, o.taskQueue);
  const trackers = new WorkflowTrackers(workflows, {
    ...trackerTimings(o),
    isState: isCycleStatus,
    queryName: 'cycleStatus',
    onChange: (key) => controller.enqueue(key),
    onState: (uid, state) => cycleStateSeen(uid, state),
    onLag: (ms) => mirrorLag.observe({ kind: 'CycleNodeRequest' }, ms / 1000),
    log: o.log,
    counts: o.stats,
  });
  const reconciler = new Reconciler({
    requests,
    statuses,
    objects,
    workflows,
    trackers,
    recordEvent: createEventActivities(o.kube).recordEvent,
    isLeader: o.isLeader,
    stats: o.stats,
    log: o.log,
    allowedNamespaces: o.allowedNamespaces,
  });
  return { controller, trackers, reconciler, requests };
}
