// Builds a Slipway worker: the workflows (from a prebuilt bundle when there is one) and the
// activities wired to real clients.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import { createActivities, type ActivityDeps } from '../activities/index.js';
import { temporalSettings, type TemporalSettings } from '../shared/temporal.js';
import { workerTuning } from './config.js';
import { livenessHeartbeat } from './liveness.js';

/** The workflows entry point: compiled JS next to this file in dist/, the TS source under jest. */
export function workflowsPath(): string {
  const js = fileURLToPath(new URL('../workflows/index.js', import.meta.url));
  return existsSync(js) ? js : fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
}

/** dist/workflow-bundle.js, written by `npm run bundle`, saves the webpack step at start-up. */
export function prebuiltBundlePath(): string | undefined {
  const p = fileURLToPath(new URL('../workflow-bundle.js', import.meta.url));
  return existsSync(p) ? p : undefined;
}

export interface SlipwayWorkerOptions {
  deps: ActivityDeps;
  settings?: TemporalSettings;
  connection?: NativeConnection;
  /** Use dist/workflow-bundle.js when present (production, benchmarks). Off by default so tests and
   * development always bundle the current sources, never a stale prebuilt bundle. */
  prebuiltBundle?: boolean;
  /** Overrides for tests and benchmarks (a shared bundle, a private task queue). */
  overrides?: Partial<WorkerOptions>;
}

export async function createWorker(opts: SlipwayWorkerOptions): Promise<{ worker: Worker; connection: NativeConnection }> {
  const settings = opts.settings ?? temporalSettings();
  const connection = opts.connection ?? (await NativeConnection.connect(settings.connection));
  const bundle = opts.prebuiltBundle ? prebuiltBundlePath() : undefined;
  const created = Worker.create({
    connection,
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    ...(bundle ? { workflowBundle: { codePath: bundle } } : { workflowsPath: workflowsPath() }),
    activities: createActivities(opts.deps),
    interceptors: { activity: [livenessHeartbeat] },
    ...workerTuning(),
    ...opts.overrides,
  });
  // A connection we opened must not outlive a failed create (start-up retries it).
  const worker = await created.catch(async (err: unknown) => {
    if (!opts.connection) await connection.close().catch(() => undefined);
    throw err;
  });
  return { worker, connection };
}
