// The metrics' own logic, without a stack: what counts as evicted / refused by a PDB / skipped /
// force-deleted in the worker, how the bridge turns mirrored states into node-cycle counters and
// drain durations, and /metrics served beside the probes in Prometheus text format.
import { Registry, Counter } from 'prom-client';
import { evictionAnswered, forcedActionRecorded } from '../../activities/metrics.js';
import { workerRegistry, bridgeRegistry } from '../../shared/metrics.js';
import { serveProbes } from '../../shared/probes.js';
import { cycleStateSeen } from '../../starter/bridge/metrics.js';
import type { CycleStatus } from '../../workflows/cycle/types.js';

type Sample = { value: number; labels: Record<string, string | number | undefined>; metricName?: string };

async function samples(r: Registry, name: string): Promise<Sample[]> {
  const m = r.getSingleMetric(name);
  if (!m) throw new Error(`no metric ${name}`);
  return (await m.get()).values as Sample[];
}

/** One sample's value from a registry, by name and labels (0 when absent). */
async function value(r: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const hit = (await samples(r, name)).find((v) => (v.metricName ?? name) === name && Object.entries(labels).every(([k, x]) => v.labels[k] === x));
  return hit?.value ?? 0;
}

async function histogramCount(r: Registry, name: string): Promise<number> {
  return (await samples(r, name)).find((v) => v.metricName === `${name}_count`)?.value ?? 0;
}

test('worker: an accepted eviction counts as evicted; a PDB refusal counts as refused and blocks the pod until another answer', async () => {
  const evicted = await value(workerRegistry, 'slipway_drain_pods_evicted_total');
  const pdb = await value(workerRegistry, 'slipway_drain_evictions_refused_total', { reason: 'pdb' });
  const blocked = await value(workerRegistry, 'slipway_drain_pods_blocked_by_pdb');
  evictionAnswered('u1', 'Blocked', "Cannot evict pod as it would violate the pod's disruption budget. The disruption budget db needs 2 healthy pods");
  evictionAnswered('u2', 'Blocked', 'conflict, will retry: x');
  evictionAnswered('u3', 'NotTried', undefined);
  expect(await value(workerRegistry, 'slipway_drain_evictions_refused_total', { reason: 'pdb' })).toBe(pdb + 1);
  expect(await value(workerRegistry, 'slipway_drain_pods_blocked_by_pdb')).toBe(blocked + 1);
  evictionAnswered('u1', 'Evicted', undefined);
  expect(await value(workerRegistry, 'slipway_drain_pods_evicted_total')).toBe(evicted + 1);
  expect(await value(workerRegistry, 'slipway_drain_pods_blocked_by_pdb')).toBe(blocked);
});

test('worker: skips and forced deletions count by the Event the drain records; other Events count nothing', async () => {
  const skipped = await value(workerRegistry, 'slipway_drain_pods_skipped_total');
  const operator = await value(workerRegistry, 'slipway_drain_pods_force_deleted_total', { trigger: 'operator' });
  const timeout = await value(workerRegistry, 'slipway_drain_pods_force_deleted_total', { trigger: 'timeout' });
  for (const r of ['DrainSkippedPod', 'DrainForceDeletedPod', 'DrainDeletedPodAfterTimeout', 'DrainDeletedPodAfterTimeout', 'DrainBlocked']) forcedActionRecorded(r);
  expect(await value(workerRegistry, 'slipway_drain_pods_skipped_total')).toBe(skipped + 1);
  expect(await value(workerRegistry, 'slipway_drain_pods_force_deleted_total', { trigger: 'operator' })).toBe(operator + 1);
  expect(await value(workerRegistry, 'slipway_drain_pods_force_deleted_total', { trigger: 'timeout' })).toBe(timeout + 2);
});

const state = (nodes: Array<[string, CycleStatus['nodes'][number]['phase']]>, phase: CycleStatus['phase'] = 'WaitingTermination'): CycleStatus => ({
  phase,
  message: '',
  nodes: nodes.map(([nodeName, p]) => ({ nodeName, phase: p })),
  nodesCycled: 0,
  nodesTotal: nodes.length,
});

test('bridge: a node cycle counts once when seen running and then ended; one already ended when first seen does not count', async () => {
  const cycled = await value(bridgeRegistry, 'slipway_nodes_cycled_total');
  const failed = await value(bridgeRegistry, 'slipway_nodes_failed_total');
  const drains = await histogramCount(bridgeRegistry, 'slipway_drain_duration_seconds');
  const t0 = 1_000_000;
  cycleStateSeen('uid-a', state([['old', 'Successful'], ['n1', 'WaitingPods'], ['n2', 'DrainingPods']]), t0);
  cycleStateSeen('uid-a', state([['old', 'Successful'], ['n1', 'DrainingPods'], ['n2', 'DrainingPods']]), t0 + 1000);
  cycleStateSeen('uid-a', state([['old', 'Successful'], ['n1', 'Successful'], ['n2', 'Failed']]), t0 + 4000);
  cycleStateSeen('uid-a', state([['old', 'Successful'], ['n1', 'Successful'], ['n2', 'Failed']], 'Failed'), t0 + 5000);
  expect(await value(bridgeRegistry, 'slipway_nodes_cycled_total')).toBe(cycled + 1);
  expect(await value(bridgeRegistry, 'slipway_nodes_failed_total')).toBe(failed + 1);
  expect(await histogramCount(bridgeRegistry, 'slipway_drain_duration_seconds')).toBe(drains + 2);
  // n1 drained 3 s, n2 4 s (its drain began at the first state).
  const sum = (await samples(bridgeRegistry, 'slipway_drain_duration_seconds')).find((v) => v.metricName === 'slipway_drain_duration_seconds_sum')!.value;
  expect(sum).toBeGreaterThanOrEqual(7);
});

test('/metrics on the probe port serves the registry in Prometheus text format; without one it is 404', async () => {
  const r = new Registry();
  new Counter({ name: 'slipway_test_total', help: 'a test counter', registers: [r] }).inc(3);
  const p = await serveProbes(0, () => ({ ready: true, reason: 'x' }), r);
  const bare = await serveProbes(0, () => ({ ready: true, reason: 'x' }));
  try {
    const res = await fetch(`http://127.0.0.1:${p.port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain; version=0.0.4');
    const body = await res.text();
    expect(body).toContain('# TYPE slipway_test_total counter');
    expect(body).toContain('slipway_test_total 3');
    expect((await fetch(`http://127.0.0.1:${bare.port}/metrics`)).status).toBe(404);
  } finally {
    await p.close();
    await bare.close();
  }
});

describe('#25.4 build info and what blocks a drain', () => {
  test('slipway_build_info carries the package version, the revision and the Node release', async () => {
    const { servedRegistry, buildInfo } = await import('../../shared/metrics.js');
    const text = await servedRegistry(new Registry()).metrics();
    const pkg = JSON.parse((await import('node:fs')).readFileSync('package.json', 'utf8')) as { version: string };
    expect(buildInfo().version).toBe(pkg.version);
    expect(text).toContain(`slipway_build_info{version="${pkg.version}",revision="${buildInfo().revision}",node="${process.versions.node}"} 1`);
  });

  test('a drain message is classed by what blocks it: pdb, hook, lock, evacuator, an invalid rule, other; progress is no block', async () => {
    const { drainBlockReason } = await import('../../starter/bridge/metrics.js');
    const wave = (line: string) => `Drain not completed yet (started at x), wave order 0:\n* ${line}`;
    expect(drainBlockReason(wave("Pods ns/a, ns/b: Cannot evict pod as it would violate the pod's disruption budget."))).toBe('pdb');
    expect(drainBlockReason('waiting for pre-drain hooks: acme (Node n1 has annotations pre-drain.delete.hook.slipway.dev/<owner>; …)')).toBe('hook');
    expect(drainBlockReason(wave('Pod ns/db-0: held by dependency lock app-db (ns/app-1 not yet evicted)'))).toBe('lock');
    expect(drainBlockReason(wave('Pod ns/db-0: evacuator acme-mover is evacuating (heartbeat 2m ago)'))).toBe('evacuator');
    expect(drainBlockReason('Drain held: an invalid DrainRule could decide about Pods on Node n1; …:\n* ns/rule: bad selector')).toBe('rule');
    expect(drainBlockReason(wave('Pod ns/a: conflict, will retry'))).toBe('other');
    expect(drainBlockReason(wave('Pod ns/a: deletionTimestamp set, but still not removed from the Node'))).toBeUndefined();
    expect(drainBlockReason(undefined)).toBeUndefined();
  });
});
