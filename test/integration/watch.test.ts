// watchUntil against the real apiserver: it sees changes made while it watches, renews a watch
// stream after its segment (so a stream that stalls silently cannot hold a wait), and gives up at
// its deadline with the objects it last saw, and stops at once when aborted.
import type { V1ConfigMap } from '@kubernetes/client-node';
import { watchUntil } from '../../kube/watch.js';
import { createNamespace, testCluster, uniqueName } from '../support/cluster.js';

const c = testCluster();
const ns = uniqueName('it-watch');

beforeAll(() => createNamespace(c, ns));
afterAll(() => c.core.deleteNamespace({ name: ns }));

function watchConfigMaps(done: (names: string[]) => boolean, opts: { timeoutMs: number; segmentMs?: number }) {
  let lists = 0;
  const result = watchUntil<V1ConfigMap>({
    kc: c.config,
    path: `/api/v1/namespaces/${ns}/configmaps`,
    list: async () => {
      lists++;
      const l = await c.core.listNamespacedConfigMap({ namespace: ns });
      return { items: l.items, resourceVersion: l.metadata?.resourceVersion ?? '' };
    },
    done: (objects) => done([...objects.values()].map((o) => o.metadata!.name!)),
    ...opts,
  });
  return { result, lists: () => lists };
}

test('a change made while watching ends the wait at once, with one list', async () => {
  const w = watchConfigMaps((names) => names.includes('a'), { timeoutMs: 30_000 });
  await new Promise((r) => setTimeout(r, 500));
  const madeAt = Date.now();
  await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'a' } } });
  const { met, objects } = await w.result;
  expect(met).toBe(true);
  expect(Date.now() - madeAt).toBeLessThan(5000);
  expect([...objects.values()].map((o) => o.metadata!.name)).toContain('a');
  expect(w.lists()).toBe(1);
});

test('the watch is renewed after each segment, from a fresh list, and still sees a change made after several', async () => {
  const w = watchConfigMaps((names) => names.includes('b'), { timeoutMs: 30_000, segmentMs: 1000 });
  await new Promise((r) => setTimeout(r, 3500));
  await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'b' } } });
  const { met } = await w.result;
  expect(met).toBe(true);
  expect(w.lists()).toBeGreaterThanOrEqual(3);
});

test('at the deadline it returns not met, with what it saw', async () => {
  const started = Date.now();
  const w = watchConfigMaps((names) => names.includes('never'), { timeoutMs: 2500, segmentMs: 1000 });
  const { met, objects } = await w.result;
  expect(met).toBe(false);
  expect(Date.now() - started).toBeGreaterThanOrEqual(2400);
  expect(Date.now() - started).toBeLessThan(10_000);
  expect([...objects.values()].map((o) => o.metadata!.name)).toEqual(expect.arrayContaining(['a', 'b']));
});

test('an abort that lands while the list is in flight ends the wait at once (it once held a wave wait for its whole segment)', async () => {
  const abort = new AbortController();
  const started = Date.now();
  const result = watchUntil<V1ConfigMap>({
    kc: c.config,
    path: `/api/v1/namespaces/${ns}/configmaps`,
    list: async () => {
      const l = await c.core.listNamespacedConfigMap({ namespace: ns });
      abort.abort(new Error('stop'));
      return { items: l.items, resourceVersion: l.metadata?.resourceVersion ?? '' };
    },
    done: () => false,
    timeoutMs: 30_000,
    signal: abort.signal,
  });
  await expect(result).rejects.toThrow('stop');
  expect(Date.now() - started).toBeLessThan(2000);
});

test('a wait with no time left still lists once and judges what it saw (a single look)', async () => {
  const seen: string[][] = [];
  const w = watchConfigMaps((names) => {
    seen.push(names);
    return false;
  }, { timeoutMs: 0 });
  const { met, objects } = await w.result;
  expect(met).toBe(false);
  expect(w.lists()).toBe(1);
  expect(seen).toHaveLength(1);
  expect([...objects.values()].map((o) => o.metadata!.name)).toEqual(expect.arrayContaining(['a', 'b']));
});
