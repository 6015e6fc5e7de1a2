// The drain's activities: cordon, classify the pods, evict a wave, wait for the wave (retrying
// refused evictions), wait for volumes, wait for DrainRules to change, wait for lifecycle hooks to go, plus deletions and Events for forced actions,
// and the Evacuations of pods that evacuators move out (NM-5).
import type { Kube } from '../../kube/client.js';
import { createEventActivities } from '../events.js';
import { createEvacuateActivities } from './evacuate.js';
import { createEvictActivities } from './evict.js';
import { createHookActivities } from './hooks.js';
import { createNodeActivities } from './node.js';
import { createSnapshotActivities } from './snapshot.js';
import { createVolumeActivities } from './volumes.js';
import { createRuleWaitActivities } from './rules-wait.js';
import { createWaveWaitActivities } from './wave-wait.js';

export function createDrainActivities(kube: Kube) {
  return {
    ...createNodeActivities(kube),
    ...createSnapshotActivities(kube),
    ...createEvictActivities(kube),
    ...createWaveWaitActivities(kube),
    ...createRuleWaitActivities(kube),
    ...createVolumeActivities(kube),
    ...createEventActivities(kube),
    ...createEvacuateActivities(kube),
    ...createHookActivities(kube),
  };
}
