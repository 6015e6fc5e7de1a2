// The worker process: hosts Slipway's workflows and activities on the configured task queue.
// Started before the apiserver or Temporal answers, it waits for them (one log line per try) and
// reports not ready on SLIPWAY_PROBE_PORT until it polls. SIGINT/SIGTERM are handled from the first
// line (as PID 1 Node has no default action for them): before the worker polls they exit at once,
// after it they drain in-flight tasks, and a second signal exits at once.
// Logs: shared/log.ts, the Temporal SDK's own lines included (worker/log.ts).
// Metrics: Slipway's own at /metrics on SLIPWAY_PROBE_PORT (shared/metrics.ts, activities/metrics.ts);
// the Temporal SDK's (task slots, poll and schedule-to-start latencies, sticky cache) from its own
// Prometheus exporter on SLIPWAY_TEMPORAL_METRICS_ADDR (host:port), off when unset.
import { Runtime, type Worker } from '@temporalio/worker';
import { apiserverAnswers, apiserverOf, createKube } from '../kube/client.js';
import { servedRegistry, workerRegistry } from '../shared/metrics.js';
import { probePortFromEnv, serveProbes, type Readiness } from '../shared/probes.js';
import { untilReachable } from '../shared/retry.js';
import { temporalSettings } from '../shared/temporal.js';
import { lineLog, logger } from '../shared/log.js';
import { temporalLogger } from './log.js';
import { createWorker } from './worker.js';

const root = logger('worker');
const log = lineLog(root);
let polling: Worker | undefined;
let signalled = false;
// Installed before anything connects: a signal while waiting for the servers exits at once.
const onSignal = (sig: NodeJS.Signals) => {
  if (!polling || signalled) {
    log(`${sig}: exiting`, { signal: sig });
    process.exit(0);
  }
  signalled = true;
  log(`${sig}: stopping (draining in-flight tasks; signal again to exit at once)`, { signal: sig });
  polling.shutdown();
};
process.on('SIGTERM', onSignal);
process.on('SIGINT', onSignal);

// The SDK's runtime is process-global and must be installed before any connection: only here, in
// the production entry (tests host several workers in one process and would fight over the port).
// Its shutdown signals are ours (above).
const temporalMetrics = process.env.SLIPWAY_TEMPORAL_METRICS_ADDR;
Runtime.install({
  logger: temporalLogger(root.child({ sdk: 'temporal' })),
  shutdownSignals: [],
  ...(temporalMetrics ? { telemetryOptions: { metrics: { prometheus: { bindAddress: temporalMetrics, countersTotalSuffix: true, useSecondsForDurations: true, unitSuffix: true } } } } : {}),
});
if (temporalMetrics) log(`Temporal SDK metrics on http://${temporalMetrics}/metrics`);
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
log(`${settings.address} namespace=${settings.namespace} taskQueue=${settings.taskQueue}`, { temporalNamespace: settings.namespace, taskQueue: settings.taskQueue });
readiness = { ready: true, reason: `polling ${settings.taskQueue}` };
polling = worker;
try {
  await worker.run();
} catch (err) {
  root.error({ err }, 'worker failed');
  process.exitCode = 1;
} finally {
  readiness = { ready: false, reason: 'stopped' };
  await connection.close();
  await probes?.close();
}
log('stopped');
process.exit();
