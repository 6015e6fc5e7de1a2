// The NodeMaintenance kind for one leadership term: its controller, its running workflows' trackers,
// the Idle previews' feed of changes (preview-feed.ts), the held nodes' feed (held-nodes.ts) and its
// reconciler.
import { createEventActivities } from '../../../activities/events.js';
import type { MaintenanceStatus } from '../../../workflows/maintenance/types.js';
import type { BridgeOptions } from '../bridge.js';
import { kindController, trackerTimings, WORKFLOW_KIND_RESYNC_MS } from '../kit.js';
import { mirrorLag } from '../metrics.js';
import { WorkflowTrackers } from '../tracker.js';
import { MaintenanceObjects, type NodeMaintenanceObject } from './objects.js';
import { HeldNodeFeed } from './held-nodes.js';
import { PreviewFeed } from './preview-feed.js';
import { MaintenanceReconciler } from './reconciler.js';
import { isMaintenanceStatus } from './status.js';
import { maintenanceWorkflows } from './temporal.js';

/** On each list of the held nodes' feed, at most this many running coordinators are told besides the held nodes. */
const COORDINATORS_TOLD_MAX = 10_000;

export function maintenanceTerm(o: BridgeOptions) {
  const objects = new MaintenanceObjects(o.kube.config);
  const controller = kindController('NodeMaintenance', o.kube.config, { ...o, resyncIntervalMs: o.resyncIntervalMs ?? WORKFLOW_KIND_RESYNC_MS });
  const maintenances = controller.watchPrimary<NodeMaintenanceObject>({ path: objects.path(), list: (p) => objects.list(p), labelSelector: o.maintenanceSelector });
  const workflows = maintenanceWorkflows(o.client, o.taskQueue);
  const trackers = new WorkflowTrackers<MaintenanceStatus>(workflows, {
    ...trackerTimings(o),
    isState: isMaintenanceStatus,
    queryName: 'maintenanceStatus',
    onChange: (key) => controller.enqueue(key),
    onLag: (ms) => mirrorLag.observe({ kind: 'NodeMaintenance' }, ms / 1000),
    log: o.log,
    counts: o.stats,
  });
  const previewFeed = new PreviewFeed({ kube: o.kube, tell: (id) => workflows.previewInputsChanged(id), isLeader: o.isLeader, stats: o.stats, log: o.log });
  const heldNodes = new HeldNodeFeed({
    kube: o.kube,
    tell: (node) => workflows.nodeChanged(node),
    coordinators: () => workflows.runningCoordinators(COORDINATORS_TOLD_MAX),
    isLeader: o.isLeader,
    stats: o.stats,
    log: o.log,
  });
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
  return { controller, trackers, reconciler, maintenances, previewFeed, heldNodes };
}
