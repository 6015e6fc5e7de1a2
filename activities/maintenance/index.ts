// NodeMaintenance activities: node selection and the Idle preview (read-only), the object's finalizer and stage, the Node's state, the waits of a held maintenance, and a rollout's node reads.
import type { Kube } from '../../kube/client.js';
import { createNodeStateActivities } from './node-state.js';
import { createMaintenanceObjectActivities } from './object.js';
import { createPreviewActivities } from './preview.js';
import { createRolloutActivities } from './rollout.js';
import { createSelectActivities } from './select.js';
import { createMaintenanceWatchActivities } from './watch.js';

export function createMaintenanceActivities(kube: Kube) {
  return {
    ...createSelectActivities(kube),
    ...createPreviewActivities(kube),
    ...createMaintenanceObjectActivities(kube),
    ...createNodeStateActivities(kube),
    ...createMaintenanceWatchActivities(kube),
    ...createRolloutActivities(kube),
  };
}
