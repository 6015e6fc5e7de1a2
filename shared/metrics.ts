// Prometheus metrics: one prom-client registry per process role, served at GET /metrics beside the
// probes (shared/probes.ts). The worker's counters are defined in activities/metrics.ts (where the
// drain acts), the bridge's in starter/bridge/metrics.ts (gauges read from its caches at scrape
// time). Node-only, like shared/temporal.ts: never imported by workflows (deterministic code).
import { collectDefaultMetrics, Registry } from 'prom-client';

/** What the worker process counts (Slipway's own; the Temporal SDK's are on their own port). */
export const workerRegistry = new Registry();
/** What the bridge process counts. */
export const bridgeRegistry = new Registry();

const withProcess = new WeakSet<Registry>();

/**
 * The registry a process serves: its role's metrics plus prom-client's process metrics (CPU, heap,
 * event-loop lag, GC), added on first use so that merely importing a module starts no timers.
 */
export function servedRegistry(registry: Registry): Registry {
  if (!withProcess.has(registry)) {
    collectDefaultMetrics({ register: registry });
    withProcess.add(registry);
  }
  return registry;
}
