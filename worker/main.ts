// The worker process: hosts Slipway's workflows and activities on the configured task queue.
// Started before the apiserver or Temporal answers, it waits for them (one log line per try) and
// reports not ready on SLIPWAY_PROBE_PORT until it polls. SIGINT/SIGTERM drain in-flight tasks
// before exit (the SDK's default shutdown signals).
// Metrics: Slipway's own at /metrics on SLIPWAY_PROBE_PORT (shared/metrics.ts, activities/metrics.ts);
// the Temporal SDK's (task slots, poll and schedule-to-start latencies, sticky cache) from its own
// Prometheus exporter on SLIPWAY_TEMPORAL_METRICS_ADDR (host:port), off when unset.
import { Runtime } from '@temporalio/worker';
import { apiserverAnswers, apiserverOf, createKube } from '../activities/kube.js';
import { servedRegistry, workerRegistry } from '../shared/metrics.js';
import { probePortFromEnv, serveProbes, type Readiness } from '../shared/probes.js';
import { untilReachable } from '../shared/retry.js';
import { temporalSettings } from '../shared/temporal.js';
import { createWorker } from './worker.js';

const log = (line: string) => console.log(`${new Date().toISOString()} slipway worker: ${line}`);
// The SDK's runtime is process-global and must be installed before any connection: only here, in
// the production entry (tests host several workers in one process and would fight over the port).
const temporalMetrics = process.env.SLIPWAY_TEMPORAL_METRICS_ADDR;
if (temporalMetrics) {
  Runtime.install({ telemetryOptions: { metrics: { prometheus: { bindAddress: temporalMetrics, countersTotalSuffix: true, useSecondsForDurations: true, unitSuffix: true } } } });
  log(`Temporal SDK metrics on http://${temporalMetrics}/metrics`);
}
const settings = temporalSettings();
const kube = createKube();
let readiness: Readiness = { ready: false, reason: 'starting' };
const port = probePortFromEnv();
const probes = port === undefined ? undefined : await serveProbes(port, () => readiness, servedRegistry(workerRegistry));
if (probes) log(`probes on :${probes.port} (/healthz, /readyz, /metrics)`);

readiness = { ready: false, reason: `waiting for the kube-apiserver at ${apiserverOf(kube)}` };
await untilReachable(`kube-apiserver at ${apiserverOf(kube)}`, () => apiserverAnswers(kube), { log });
readiness = { ready: false, reason: `waiting for Temporal at ${settings.address}` };
const { worker, connection } = await untilReachable(`Temporal at ${settings.address}`, () => createWorker({ deps: { kube }, settings, prebuiltBundle: true }), { log });
log(`${settings.address} namespace=${settings.namespace} taskQueue=${settings.taskQueue}`);
readiness = { ready: true, reason: `polling ${settings.taskQueue}` };
try {
  await worker.run();
} finally {
  readiness = { ready: false, reason: 'stopped' };
  await connection.close();
  await probes?.close();
}
