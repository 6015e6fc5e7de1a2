// The bridge-fleet benchmark's worker: every production workflow (its NodeMaintenances are real),
// with cycleNodeRequestWorkflow replaced by the fleet stand-in (bench/fleet-request.ts).
export * from '../workflows/index.js';
export { cycleNodeRequestWorkflow } from './fleet-request.js';
