// The CRD bridge as the chaos runner runs it: the real bridge (starter/bridge) in its own process,
// watching one namespace with its Lease there and only the NodeMaintenances of its run, so a run touches
// nothing outside its own objects. Env: the bridge's, plus SLIPWAY_WATCH_NAMESPACE (required).
import { startBridge } from '../../starter/bridge/main.js';

const namespace = process.env.SLIPWAY_WATCH_NAMESPACE;
if (!namespace) throw new Error('SLIPWAY_WATCH_NAMESPACE is required');
// SLIPWAY_CHAOS_MAINTENANCES: a label selector; the NodeMaintenances it picks are reconciled too (only those: they are cluster-scoped).
const maintenanceSelector = process.env.SLIPWAY_CHAOS_MAINTENANCES || undefined;
const running = await startBridge({ namespace, leaseNamespace: namespace, maintenances: !!maintenanceSelector, maintenanceSelector, log: (l) => process.stderr.write(`${new Date().toISOString()} bridge: ${l}\n`) });
const stop = () => void running.stop().finally(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
