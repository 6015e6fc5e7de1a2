// The worker's shared reflector (kube/object-cache.ts) against the real apiserver: waits on it
// make no list of their own, a write of ours is seen at once, and when it cannot answer a wait lists
// and watches for itself, so nothing is missed.
import { KubeConfig, type V1ConfigMap } from '@kubernetes/client-node';
import { ObjectCache } from '../../kube/object-cache.js';
import { watchUntil } from '../../kube/watch.js';
import { createNamespace, testCluster, uniqueName } from '../support/cluster.js';

const c = testCluster();
const ns = uniqueName('it-cache');
const caches: Array<ObjectCache<V1ConfigMap>> = [];
let stopped = 0;

function configMapCache(kc: KubeConfig = c.config, idleMs = 60_000): ObjectCache<V1ConfigMap> {
  const cache = new ObjectCache<V1ConfigMap>({
    kc,
    path: `/api/v1/namespaces/${ns}/configmaps`,
    list: async () => {
      const l = await c.core.listNamespacedConfigMap({ namespace: ns });
      return { items: l.items, resourceVersion: l.metadata?.resourceVersion ?? '' };
    },
    key: (o) => o.metadata?.name,
    idleMs,
    segmentMs: 60_000,
    onStopped: () => stopped++,
  });
  caches.push(cache);
  return cache;
}

async function synced(cache: ObjectCache<V1ConfigMap>): Promise<void> {
  for (const until = Date.now() + 10_000; !cache.current(); await new Promise((r) => setTimeout(r, 50))) {
    if (Date.now() > until) throw new Error('cache never synced');
  }
}

function waitFor(name: string, cache: ObjectCache<V1ConfigMap> | undefined, timeoutMs = 20_000) {
  let lists = 0;
  const result = watchUntil<V1ConfigMap>({
    kc: c.config,
    path: `/api/v1/namespaces/${ns}/configmaps`,
    list: async () => {
      lists++;
      const l = await c.core.listNamespacedConfigMap({ namespace: ns });
      return { items: l.items, resourceVersion: l.metadata?.resourceVersion ?? '' };
    },
    done: (objects) => [...objects.values()].some((o) => o.metadata?.name === name),
    timeoutMs,
    ...(cache ? { cached: cache } : {}),
  });
  return { result, lists: () => lists };
}

beforeAll(() => createNamespace(c, ns));
afterAll(async () => {
  for (const cache of caches) (cache as unknown as { stop: AbortController }).stop.abort();
  await c.core.deleteNamespace({ name: ns });
});

test('two waits on a synced cache see a create at once, with one list between them and none of their own', async () => {
  const cache = configMapCache();
  await synced(cache);
  const a = waitFor('one', cache);
  const b = waitFor('one', cache);
  await new Promise((r) => setTimeout(r, 300));
  const madeAt = Date.now();
  await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'one' } } });
  const [ra, rb] = await Promise.all([a.result, b.result]);
  expect(ra.met && rb.met).toBe(true);
  expect(Date.now() - madeAt).toBeLessThan(5000);
  expect(a.lists() + b.lists()).toBe(0);
  expect(cache.lists).toBe(1);
  expect(cache.get('one')?.metadata?.managedFields).toBeUndefined(); // stripped: nothing reads them
});

test('a wait on a cache that is still making its first list waits for it rather than listing by itself', async () => {
  const cache = configMapCache();
  const w = waitFor('early', cache); // the cache has not synced yet
  await new Promise((r) => setTimeout(r, 300));
  await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'early' } } });
  expect((await w.result).met).toBe(true);
  expect(w.lists()).toBe(0);
  expect(cache.lists).toBe(1);
});

test('a wait whose condition throws fails alone: the cache and the other waits on it go on', async () => {
  const cache = configMapCache();
  await synced(cache);
  const failing = watchUntil<V1ConfigMap>({
    kc: c.config,
    path: `/api/v1/namespaces/${ns}/configmaps`,
    list: () => Promise.reject(new Error('must not list')),
    done: (objects) => {
      if ([...objects.values()].some((o) => o.metadata?.name === 'boom')) throw new Error('condition failed');
      return false;
    },
    timeoutMs: 20_000,
    cached: cache,
  });
  // Judged from now: the wait may fail (on the watch event) before the create's answer comes back,
  // and a rejection nobody is waiting for yet fails the test file as unhandled.
  const failed = expect(failing).rejects.toThrow('condition failed');
  const other = waitFor('boom', cache);
  await new Promise((r) => setTimeout(r, 300));
  await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'boom' } } });
  await failed;
  expect((await other.result).met).toBe(true);
  expect(other.lists()).toBe(0);
});

test('a write made against the cached version replaces it at once; one made against an older version does not', async () => {
  const cache = configMapCache();
  await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'two' }, data: { v: '1' } } });
  await synced(cache);
  for (const until = Date.now() + 5000; !cache.get('two'); await new Promise((r) => setTimeout(r, 50))) if (Date.now() > until) throw new Error('not seen');
  const before = cache.get('two')!;
  const after = await c.core.replaceNamespacedConfigMap({ namespace: ns, name: 'two', body: { ...before, data: { v: '2' } } });
  cache.wrote(before, after);
  expect(cache.get('two')?.metadata?.resourceVersion).toBe(after.metadata?.resourceVersion);
  // `before` is no longer what the cache holds: a late answer to an older write changes nothing.
  cache.wrote(before, { ...after, data: { v: 'stale' } });
  expect(cache.get('two')?.data?.v).toBe('2');
});

test('a cache that cannot sync answers nothing, and a wait on it lists and watches for itself', async () => {
  const dead = new KubeConfig();
  dead.loadFromOptions({
    clusters: [{ name: 'dead', server: 'https://127.0.0.1:1', skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'dead', cluster: 'dead', user: 'u' }],
    currentContext: 'dead',
  });
  const cache = new ObjectCache<V1ConfigMap>({
    kc: dead,
    path: `/api/v1/namespaces/${ns}/configmaps`,
    list: () => Promise.reject(new Error('connection refused')),
    key: (o) => o.metadata?.name,
    idleMs: 60_000,
    segmentMs: 60_000,
    onStopped: () => undefined,
  });
  caches.push(cache);
  expect(cache.current()).toBeUndefined();
  expect(cache.subscribe(() => undefined)).toBeUndefined();
  const w = waitFor('three', cache);
  await new Promise((r) => setTimeout(r, 300));
  await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'three' } } });
  expect((await w.result).met).toBe(true);
  expect(w.lists()).toBe(1);
});

test('a cache that stops answering mid-wait hands the wait to its own list and watch, which still sees the change', async () => {
  const cache = configMapCache();
  await synced(cache);
  const w = waitFor('four', cache);
  await new Promise((r) => setTimeout(r, 300));
  expect(w.lists()).toBe(0);
  (cache as unknown as { unsync(): void }).unsync(); // what a failed stream does
  await new Promise((r) => setTimeout(r, 300));
  expect(w.lists()).toBe(1);
  await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: 'four' } } });
  expect((await w.result).met).toBe(true);
});

test('an unused cache stops, and says so', async () => {
  const before = stopped;
  const cache = configMapCache(c.config, 300);
  await synced(cache);
  for (const until = Date.now() + 5000; stopped === before; await new Promise((r) => setTimeout(r, 100))) if (Date.now() > until) break;
  expect(stopped).toBe(before + 1);
  expect(cache.current()).toBeUndefined();
});
