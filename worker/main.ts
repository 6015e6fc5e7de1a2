// The worker process: hosts Slipway's workflows and activities on the configured task queue.
// Started before the apiserver or Temporal answers, it waits for them (one log line per try) and
// reports not ready on SLIPWAY_PROBE_PORT until it polls. SIGINT/SIGTERM drain in-flight tasks
// before exit (the SDK's default shutdown signals).
import { apiserverAnswers, apiserverOf, createKube } from '../activities/kube.js';
import { probePortFromEnv, serveProbes, type Readiness } from '../shared/probes.js';
import { untilReachable } from '../shared/retry.js';
import { temporalSettings } from '../shared/temporal.js';
import { createWorker } from './worker.js';

const log = (line: string) => console.log(`${new Date().toISOString()} slipway worker: ${line}`);
const settings = temporalSettings();
const kube = createKube();
let readiness: Readiness = { ready: false, reason: 'starting' };
const port = probePortFromEnv();
const probes = port === undefined ? undefined : await serveProbes(port, () => readiness);
if (probes) log(`probes on :${probes.port} (/healthz, /readyz)`);

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
