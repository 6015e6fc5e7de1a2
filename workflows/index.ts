// Every workflow the worker hosts. Deterministic code only: no I/O, clocks or randomness here.
export { inventoryWorkflow } from './inventory.js';
export { drainWorkflow } from './drain/drain.js';
export { cycleNodeRequestWorkflow } from './cycle/request.js';
export { cycleNodeWorkflow } from './cycle/node.js';
export { nodeGroupLockWorkflow } from './cycle/lock.js';
export { nodeMaintenanceWorkflow } from './maintenance/maintenance.js';
export { maintenanceNodeWorkflow } from './maintenance/node.js';
export { nodeGroupObserverWorkflow } from './node-group/observer.js';
