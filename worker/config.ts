// How the worker process runs: its Node flags, its environment and its sizing (its Temporal
// connection: shared/temporal.ts).
import { getHeapStatistics } from 'node:v8';

type Env = Record<string, string | undefined>;

/**
 * The Node flags the worker process runs with (package.json `worker`, the Dockerfile, compose and
 * the benchmark; a unit test keeps them equal). Without a bound V8 grows its heap lazily towards
 * its default limit (a quarter of the machine): a 50-node cycle took the worker to 450-530 MB RSS.
 * Bounded, it stays under 300 MB; the semi-space stays big enough that young-generation GC does
 * not eat the CPU a busy control plane needs.
 */
export const WORKER_NODE_FLAGS = ['--max-old-space-size=128', '--max-semi-space-size=8'] as const;

/**
 * The environment the worker process starts with (the Dockerfile, compose, the manifests, `npm run
 * worker` and the scale benchmark; a unit test keeps them equal). glibc gives each thread that
 * allocates its own malloc arena (up to 8 per core): the SDK's Rust core and Node's threads left
 * about 50 MB of RSS in half-empty arenas at 300 nodes in flight (#28, SLIPWAY_BENCH=scale). Two
 * arenas cost no measurable time. It must be in the environment before the process starts.
 */
export const WORKER_ENV = { MALLOC_ARENA_MAX: '2' } as const;

/** The workflow thread's heap without any workflow cached: the bundle's code, source map and contexts (39 MiB measured). */
export const WORKFLOW_HEAP_BASE_MIB = 64;
/**
 * Heap per cached workflow, with room to spare: a cached cycleNodeWorkflow took 0.12 MiB of the
 * workflow thread's heap (heap snapshots at 20 and 100 cached, #28); a request's state is bigger.
 */
export const CACHED_WORKFLOW_MIB = 0.5;
/** The cache's bounds whatever the heap: below 10 every activation replays; 1,000 is two requests' nodes in flight. */
export const CACHED_WORKFLOWS_MIN = 10;
export const CACHED_WORKFLOWS_MAX = 1_000;

/**
 * How many workflows the worker keeps cached for a heap limit (MiB; each V8 isolate, the workflow
 * thread's among them, has it): what is left past the workflow thread's base, at CACHED_WORKFLOW_MIB
 * each. Under WORKER_NODE_FLAGS (152 MiB) that is 176: the 500 node cycles a request keeps in flight
 * by default replay from a short history when evicted, the request itself stays hot. A bigger
 * --max-old-space-size gives a bigger cache; SLIPWAY_MAX_CACHED_WORKFLOWS overrides it.
 */
export function cachedWorkflowsFor(heapLimitMiB: number): number {
  const fit = Math.floor((heapLimitMiB - WORKFLOW_HEAP_BASE_MIB) / CACHED_WORKFLOW_MIB);
  return Math.min(CACHED_WORKFLOWS_MAX, Math.max(CACHED_WORKFLOWS_MIN, fit));
}

/** This process's heap limit in MiB (what --max-old-space-size and the semi-spaces give). */
export const heapLimitMiB = (): number => getHeapStatistics().heap_size_limit / 1024 / 1024;

/** Worker sizing from the environment; unset keeps the SDK's defaults. */
export interface WorkerTuning {
  maxCachedWorkflows?: number;
  maxConcurrentActivityTaskExecutions?: number;
  maxConcurrentWorkflowTaskExecutions?: number;
  maxHeartbeatThrottleInterval?: string;
}

export function workerTuning(env: Env = process.env, heapMiB: number = heapLimitMiB()): WorkerTuning {
  const int = (name: string): number | undefined => {
    const v = env[name];
    if (v === undefined || v === '') return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new Error(`${name}=${v} must be a positive integer`);
    return n;
  };
  const t: WorkerTuning = {
    // The SDK derives its default from the heap limit too, but at 1.7 MiB a workflow (a context per
    // workflow): under WORKER_NODE_FLAGS that is 10, fewer than one cycle's running workflows, so
    // every activation would replay a whole history. Ours is measured with the shared context.
    maxCachedWorkflows: int('SLIPWAY_MAX_CACHED_WORKFLOWS') ?? cachedWorkflowsFor(heapMiB),
    maxConcurrentActivityTaskExecutions: int('SLIPWAY_MAX_CONCURRENT_ACTIVITIES'),
    maxConcurrentWorkflowTaskExecutions: int('SLIPWAY_MAX_CONCURRENT_WORKFLOW_TASKS'),
    // A signal (skipPod, forceDeletePod, retryNow) cancels the running wave wait, and a cancel
    // reaches an activity only in the answer to a heartbeat: the SDK's default throttle (0.8 x the
    // 15 s heartbeat timeout) would keep an operator waiting 12 s. Waits heartbeat every second.
    maxHeartbeatThrottleInterval: '2 seconds',
  };
  return Object.fromEntries(Object.entries(t).filter(([, v]) => v !== undefined));
}
