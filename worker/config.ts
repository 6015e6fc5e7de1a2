// How the worker process runs: its Node flags and its sizing (its Temporal connection: shared/temporal.ts).

type Env = Record<string, string | undefined>;

/**
 * The Node flags the worker process runs with (package.json `worker`, the Dockerfile, compose and
 * the benchmark; a unit test keeps them equal). Without a bound V8 grows its heap lazily towards
 * its default limit (a quarter of the machine): a 50-node cycle took the worker to 450-530 MB RSS.
 * Bounded, it stays under 300 MB; the semi-space stays big enough that young-generation GC does
 * not eat the CPU a busy control plane needs.
 */
export const WORKER_NODE_FLAGS = ['--max-old-space-size=128', '--max-semi-space-size=8'] as const;

/** Worker sizing from the environment; unset keeps the SDK's defaults. */
export interface WorkerTuning {
  maxCachedWorkflows?: number;
  maxConcurrentActivityTaskExecutions?: number;
  maxConcurrentWorkflowTaskExecutions?: number;
  maxHeartbeatThrottleInterval?: string;
}

export function workerTuning(env: Env = process.env): WorkerTuning {
  const int = (name: string): number | undefined => {
    const v = env[name];
    if (v === undefined || v === '') return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${name}=${v} must be a positive integer`);
    return n;
  };
  const t: WorkerTuning = {
    // The SDK derives its default from the heap limit, and under the bounded heap the worker runs
    // with (WORKER_NODE_FLAGS) that is 10: fewer than one cycle's running workflows, so every
    // activation would replay a whole history. 100 running workflows fit in the bounded heap.
    maxCachedWorkflows: int('SLIPWAY_MAX_CACHED_WORKFLOWS') ?? 100,
    maxConcurrentActivityTaskExecutions: int('SLIPWAY_MAX_CONCURRENT_ACTIVITIES'),
    maxConcurrentWorkflowTaskExecutions: int('SLIPWAY_MAX_CONCURRENT_WORKFLOW_TASKS'),
    // A signal (skipPod, forceDeletePod, retryNow) cancels the running wave wait, and a cancel
    // reaches an activity only in the answer to a heartbeat: the SDK's default throttle (0.8 x the
    // 15 s heartbeat timeout) would keep an operator waiting 12 s. Waits heartbeat every second.
    maxHeartbeatThrottleInterval: '2 seconds',
  };
  return Object.fromEntries(Object.entries(t).filter(([, v]) => v !== undefined));
}
