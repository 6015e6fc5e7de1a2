// A Temporal dev server of our own (the stack's binary, a random port, in memory) and a worker with
// the real workflows and stub activities (bench/stub-activities.ts): cycle workflow tests in seconds,
// without the shared stack or its lock.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Runtime, DefaultLogger, Worker } from '@temporalio/worker';
import { ALL_SEARCH_ATTRIBUTES } from '../../workflows/search-attributes.js';
import { stubActivities, type StubCluster } from '../../bench/stub-activities.js';
import { workflowCode } from './workflow-env.js';

export const TEMPORAL_BIN = process.env.SLIPWAY_TEMPORAL_BIN ?? join(homedir(), '.cache/slipway/bin/temporal');

export async function cycleEnv(): Promise<TestWorkflowEnvironment> {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // installed already (one runtime per process)
  }
  return TestWorkflowEnvironment.createLocal({
    server: { executable: { type: 'existing-path', path: TEMPORAL_BIN }, searchAttributes: ALL_SEARCH_ATTRIBUTES },
  });
}

/** Runs `fn` while a worker with the stubs for `cluster` polls `taskQueue`. */
export async function withStubWorker<T>(env: TestWorkflowEnvironment, taskQueue: string, cluster: StubCluster, fn: () => Promise<T>): Promise<T> {
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    ...workflowCode(), // the workflow project's bundle, made once per run
    activities: stubActivities(cluster),
  });
  return worker.runUntil(fn);
}
