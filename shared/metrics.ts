// Prometheus metrics: one prom-client registry per process role, served at GET /metrics beside the
// probes (shared/probes.ts). The worker's counters are defined in activities/metrics.ts (where the
// drain acts), the bridge's in starter/bridge/metrics.ts (gauges read from its caches at scrape
// time). Node-only, like shared/temporal.ts: never imported by workflows (deterministic code).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { collectDefaultMetrics, Gauge, Registry } from 'prom-client';

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
    const b = buildInfo();
    new Gauge({ name: 'slipway_build_info', help: 'Always 1: the version (package.json), source revision (SLIPWAY_REVISION, set by the image build) and Node.js release this process runs.', labelNames: ['version', 'revision', 'node'] as const, registers: [registry] }).set(b, 1);
    withProcess.add(registry);
  }
  return registry;
}

/** The package's version: package.json above this module (dist/shared/ in the image, shared/ in tests). */
function packageVersion(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const p = join(dir, 'package.json');
    if (existsSync(p)) return (JSON.parse(readFileSync(p, 'utf8')) as { version?: string }).version ?? 'unknown';
  }
  return 'unknown';
}

/** The labels of slipway_build_info. */
export function buildInfo(): { version: string; revision: string; node: string } {
  return { version: packageVersion(), revision: process.env.SLIPWAY_REVISION || 'unknown', node: process.versions.node };
}
