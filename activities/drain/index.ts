// The drain's activities: cordon, classify the pods, evict a wave, wait until pods are gone,
// wait for volumes, plus deletions and Events for forced actions.
import type { Kube } from '../kube.js';
import { createEventActivities } from '../events.js';
import { createEvictActivities } from './evict.js';
import { createNodeActivities } from './node.js';
import { createSnapshotActivities } from './snapshot.js';
import { createVolumeActivities } from './volumes.js';
import { createWaitGoneActivities } from './wait-gone.js';

export function createDrainActivities(kube: Kube) {
  return {
    ...createNodeActivities(kube),
    ...createSnapshotActivities(kube),
    ...createEvictActivities(kube),
    ...createWaitGoneActivities(kube),
    ...createVolumeActivities(kube),
    ...createEventActivities(kube),
  };
}
