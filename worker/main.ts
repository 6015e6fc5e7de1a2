// The worker process: hosts Slipway's workflows and activities on the configured task queue.
// SIGINT/SIGTERM drain in-flight tasks before exit (the SDK's default shutdown signals).
import { createKube } from '../activities/kube.js';
import { temporalSettings } from '../shared/temporal.js';
import { createWorker } from './worker.js';

const settings = temporalSettings();
const { worker, connection } = await createWorker({ deps: { kube: createKube() }, settings, prebuiltBundle: true });
console.log(`slipway worker: ${settings.address} namespace=${settings.namespace} taskQueue=${settings.taskQueue}`);
try {
  await worker.run();
} finally {
  await connection.close();
}
