// The CRD bridge as the chaos runner runs it: the real bridge (starter/bridge) in its own process,
// watching one namespace with its Lease there and without NodeMaintenances, so a run touches
// nothing outside its own objects. Env: the bridge's, plus SLIPWAY_WATCH_NAMESPACE (required).
import { startBridge } from '../../starter/bridge/main.js';

const namespace = process.env.SLIPWAY_WATCH_NAMESPACE;
if (!namespace) throw new Error('SLIPWAY_WATCH_NAMESPACE is required');
const running = await startBridge({ namespace, leaseNamespace: namespace, maintenances: false, log: (l) => process.stderr.write(`${new Date().toISOString()} bridge: ${l}\n`) });
const stop = () => void running.stop().finally(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
