// The worker's process settings (#28: its RSS at fleet size): the cache size derived from the heap
// limit, and the environment it starts with wherever it is started.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parseAllDocuments, parse } from 'yaml';
import { CACHED_WORKFLOWS_MAX, CACHED_WORKFLOWS_MIN, WORKER_ENV, WORKER_NODE_FLAGS, cachedWorkflowsFor, workerTuning } from '../../worker/config.js';

/** The heap limit (MiB) a Node process started with these flags has. */
const heapLimitWith = (flags: readonly string[]) =>
  Number(execFileSync(process.execPath, [...flags, '-e', 'process.stdout.write(String(require("v8").getHeapStatistics().heap_size_limit / 1048576))']).toString());

describe('#28 the worker cache size from the heap limit', () => {
  test('#28 under WORKER_NODE_FLAGS the worker caches more than the SDK default would, and within the heap', () => {
    const heap = heapLimitWith(WORKER_NODE_FLAGS);
    const n = workerTuning({}, heap).maxCachedWorkflows!;
    expect(n).toBe(cachedWorkflowsFor(heap));
    // More than the SDK's own default under this heap (10), and 0.5 MiB each fits beside the workflow thread's base.
    expect(n).toBeGreaterThan(100);
    expect(n * 0.5 + 64).toBeLessThanOrEqual(heap);
  });

  test('#28 a bigger heap gives a bigger cache, bounded on both sides', () => {
    expect(cachedWorkflowsFor(512)).toBeGreaterThan(cachedWorkflowsFor(152));
    expect(cachedWorkflowsFor(64)).toBe(CACHED_WORKFLOWS_MIN);
    expect(cachedWorkflowsFor(4144)).toBe(CACHED_WORKFLOWS_MAX);
  });

  test('#28 SLIPWAY_MAX_CACHED_WORKFLOWS overrides the derived size, and a bad value is refused', () => {
    expect(workerTuning({ SLIPWAY_MAX_CACHED_WORKFLOWS: '40' }, 152).maxCachedWorkflows).toBe(40);
    expect(() => workerTuning({ SLIPWAY_MAX_CACHED_WORKFLOWS: 'lots' }, 152)).toThrow(/positive integer/);
  });
});

test('#28 the worker starts with WORKER_ENV (MALLOC_ARENA_MAX) wherever it is started: Dockerfile, compose, the manifest, npm run worker', () => {
  const entries = Object.entries(WORKER_ENV);
  expect(entries.length).toBeGreaterThan(0);
  const dockerfile = readFileSync('Dockerfile', 'utf8');
  const compose = parse(readFileSync('docker-compose.yml', 'utf8')) as { services: { worker: { environment: Record<string, string> } } };
  const manifest = parseAllDocuments(readFileSync('deploy/worker.yaml', 'utf8')).map((d) => d.toJS() as { kind?: string; spec?: { template: { spec: { containers: Array<{ name: string; env?: Array<{ name: string; value: string }> }> } } } });
  const container = manifest.find((d) => d.kind === 'Deployment')!.spec!.template.spec.containers.find((c) => c.name === 'worker')!;
  const script = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts.worker!;
  for (const [k, v] of entries) {
    expect(dockerfile).toMatch(new RegExp(`^ENV ${k}=${v}$`, 'm'));
    expect(compose.services.worker.environment[k]).toBe(v);
    expect(container.env?.find((e) => e.name === k)?.value).toBe(v);
    expect(script).toContain(`${k}=${v} node ${WORKER_NODE_FLAGS.join(' ')}`);
  }
});
