// Node cycling's activities: resolve the request, claim nodes, scale (detach, replacements, heal, terminate),
// health checks, and the per-node pod steps.
import type { Kube } from '../../kube/client.js';
import type { NodeGroupProvider } from '../providers/types.js';
import { createClaimActivities } from './claim.js';
import { createHealthActivities } from './health.js';
import { createHeldWaitActivities } from './held-wait.js';
import { createCyclePodActivities } from './pods.js';
import { createResolveActivities } from './resolve.js';
import { createScaleActivities } from './scale.js';

export function createCycleActivities(kube: Kube, providers: Record<string, NodeGroupProvider>, defaultProvider: string) {
  return {
    ...createResolveActivities(kube, providers, defaultProvider),
    ...createScaleActivities(kube, providers),
    ...createClaimActivities(kube),
    ...createHeldWaitActivities(kube),
    ...createHealthActivities(),
    ...createCyclePodActivities(kube),
  };
}
