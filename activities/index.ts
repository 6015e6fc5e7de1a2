// All activities, built from their dependencies so tests hand in clients for the local stack.
import type { Kube } from './kube.js';
import { createDrainActivities } from './drain/index.js';
import { createInventoryActivities } from './inventory.js';

export interface ActivityDeps {
  kube: Kube;
}

export function createActivities(deps: ActivityDeps) {
  return {
    ...createInventoryActivities(deps.kube),
    ...createDrainActivities(deps.kube),
  };
}

export type Activities = ReturnType<typeof createActivities>;
