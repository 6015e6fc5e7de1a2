// All activities, built from their dependencies so tests hand in clients for the local stack.
import type { Kube } from '../kube/client.js';
import { createCycleActivities } from './cycle/index.js';
import { createDrainActivities } from './drain/index.js';
import { createProviders, defaultProviderName } from './providers/index.js';
import type { NodeGroupProvider } from './providers/types.js';
import { createInventoryActivities } from './inventory.js';
import { createMaintenanceActivities } from './maintenance/index.js';
import { createBudgetActivities } from './budget/index.js';
import { createBudgetWaitActivities } from './budget/wait.js';
import { createBudgetFitActivities } from './budget/fit.js';
import { createNodeGroupActivities } from './node-group/observe.js';

export interface ActivityDeps {
  kube: Kube;
  /** Node-group providers by name (kwok, aws); default: both, AWS configured from the environment. */
  providers?: Record<string, NodeGroupProvider>;
  /** Default: SLIPWAY_PROVIDER, or kwok. */
  defaultProvider?: string;
}

export function createActivities(deps: ActivityDeps) {
  const providers = deps.providers ?? createProviders({ kube: deps.kube });
  const defaultProvider = deps.defaultProvider ?? defaultProviderName();
  return {
    ...createInventoryActivities(deps.kube),
    ...createDrainActivities(deps.kube),
    ...createMaintenanceActivities(deps.kube),
    ...createBudgetActivities(deps.kube),
    ...createBudgetWaitActivities(deps.kube),
    ...createBudgetFitActivities(deps.kube),
    ...createCycleActivities(deps.kube, providers, defaultProvider),
    ...createNodeGroupActivities(deps.kube, providers, defaultProvider),
  };
}

export type Activities = ReturnType<typeof createActivities>;
