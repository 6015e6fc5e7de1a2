// Workflow tests without the stack: a Temporal dev server of their own (the CLI binary the stack
// installs, started by @temporalio/testing on a free port, in memory), the real workflow code, and
// activities each test writes. One server per test file; one worker per test, on its own task queue.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { Context } from '@temporalio/activity';
import type { Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkerOptions } from '@temporalio/worker';
import { workflowsPath } from '../../worker/worker.js';
import { ALL_SEARCH_ATTRIBUTES } from '../../workflows/search-attributes.js';

/** The Temporal CLI that `stack/stack.sh up` (stack/build.sh) installs under $SLIPWAY_HOME/bin. */
export function temporalBinary(): string {
  const path = join(process.env.SLIPWAY_HOME ?? join(homedir(), '.cache', 'slipway'), 'bin', 'temporal');
  if (!existsSync(path)) throw new Error(`no Temporal CLI at ${path}: run \`bash stack/stack.sh up\` once (it installs it), or set SLIPWAY_HOME`);
  return path;
}

/** Set by test/workflow/global-setup.ts: the workflows bundled once for every file of the run. */
export const BUNDLE_ENV = 'SLIPWAY_TEST_WORKFLOW_BUNDLE';

/** The workflow code the workers load: the run's bundle, or the sources (bundled per worker) without one. */
export function workflowCode(): Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> {
  const codePath = process.env[BUNDLE_ENV];
  return codePath ? { workflowBundle: { codePath } } : { workflowsPath: workflowsPath() };
}

export interface WorkflowEnvOptions {
  /** Server dynamic config, e.g. `limit.historyCount.suggestContinueAsNew` to force continue-as-new. */
  dynamicConfig?: Record<string, string | number>;
}

export interface WorkerChoice {
  /**
   * The workflow IDs whose activities these are (each also covers its children, `<id>/...`). Tests
   * of a file share its workers and may run at once (test.concurrent): activities are routed by
   * the ID of the workflow that calls them. Default: every workflow (then tests must not overlap).
   */
  workflowIds?: string[];
  /**
   * Heartbeats answered within 50 ms, so a cancelled activity learns of it at once (default). False:
   * the SDK's throttling, as the worker runs in production (0.8 × heartbeatTimeout: 12 s for the
   * drain's waits), for tests of what happens while a cancel has not reached the activity yet.
   */
  fastCancellation?: boolean;
}

export interface WorkflowTestEnv {
  env: TestWorkflowEnvironment;
  client: Client;
  /**
   * Runs `body` with a worker that answers the chosen workflows' activities with these, on the task
   * queue it is given. Workers are shared by the file's tests (creating one costs a second or two);
   * each test's workflows must end within it.
   */
  withWorker<T>(activities: Record<string, (...args: never[]) => unknown>, body: (taskQueue: string) => Promise<T>, choice?: WorkerChoice): Promise<T>;
}

type Impl = Record<string, (...args: unknown[]) => unknown>;
interface Route {
  ids?: string[];
  impl: Impl;
}

const covers = (r: Route, id: string) => !r.ids || r.ids.some((p) => id === p || id.startsWith(`${p}/`));

export async function startWorkflowEnv(opts: WorkflowEnvOptions = {}): Promise<WorkflowTestEnv & { teardown(): Promise<void> }> {
  const extraArgs = Object.entries(opts.dynamicConfig ?? {}).flatMap(([k, v]) => ['--dynamic-config-value', `${k}=${JSON.stringify(v)}`]);
  const env = await TestWorkflowEnvironment.createLocal({
    server: { executable: { type: 'existing-path', path: temporalBinary() }, searchAttributes: ALL_SEARCH_ATTRIBUTES, extraArgs, log: { format: 'pretty', level: 'error' } },
  });
  const routes: Route[] = [];
  const workers = new Map<string, Promise<{ taskQueue: string; worker: Worker; running: Promise<void> }>>();
  const workerFor = (names: string[], fast: boolean) => {
    const key = `${fast}:${[...names].sort().join()}`;
    if (!workers.has(key)) {
      const taskQueue = `wf-test-${workers.size + 1}`;
      // Each activity calls the implementation of the test whose workflow called it.
      const dispatch = (name: string) => (...args: unknown[]) => {
        const id = Context.current().info.workflowExecution?.workflowId ?? '';
        const route = [...routes].reverse().find((r) => covers(r, id));
        if (!route?.impl[name]) throw ApplicationFailure.nonRetryable(`no scripted ${name} for workflow ${id} (its test has ended?)`);
        return route.impl[name]!(...args);
      };
      const created = Worker.create({
        connection: env.nativeConnection,
        taskQueue,
        ...workflowCode(),
        activities: Object.fromEntries(names.map((n) => [n, dispatch(n)])),
        // Cancellation reaches an activity with a heartbeat's answer: answer within 50 ms, not 12 s.
        ...(!fast ? {} : { maxHeartbeatThrottleInterval: '50 milliseconds', defaultHeartbeatThrottleInterval: '50 milliseconds' }),
      }).then((worker) => ({ taskQueue, worker, running: worker.run() }));
      workers.set(key, created);
    }
    return workers.get(key)!;
  };
  return {
    env,
    client: env.client,
    async withWorker(activities, body, choice = {}) {
      const w = await workerFor(Object.keys(activities), choice.fastCancellation !== false);
      const route: Route = { ids: choice.workflowIds, impl: activities as Impl };
      routes.push(route);
      const failed = w.running.then(() => {
        throw new Error('the test worker stopped');
      });
      try {
        return await Promise.race([body(w.taskQueue), failed]);
      } finally {
        routes.splice(routes.indexOf(route), 1);
      }
    },
    async teardown() {
      const all = await Promise.allSettled(workers.values());
      for (const w of all) if (w.status === 'fulfilled') w.value.worker.shutdown();
      await Promise.allSettled([...all].map((w) => (w.status === 'fulfilled' ? w.value.running : undefined)));
      await env.teardown();
    },
  };
}

/** One environment for the file: started before its tests, stopped after them. */
export function useWorkflowEnv(opts: WorkflowEnvOptions = {}): () => WorkflowTestEnv {
  let t: (WorkflowTestEnv & { teardown(): Promise<void> }) | undefined;
  beforeAll(async () => {
    t = await startWorkflowEnv(opts);
  }, 60_000);
  afterAll(async () => {
    await t?.teardown();
  });
  return () => {
    if (!t) throw new Error('the workflow test environment did not start (see beforeAll)');
    return t;
  };
}
