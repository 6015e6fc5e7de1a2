// The worker's Node cache (object-cache.ts): the node coordinator's writes, the drain's node reads
// and the wave wait's watch on its node use it instead of a GET, or a list and a watch, each. In a
// NodeMaintenance those were a quarter of the drain's requests (issue 11).
//
// Freshness: a read answers from the cache only while it is synced; else it GETs, as before. A node
// the synced cache does not have is GOT too (it may have just joined). Writers that compute a patch
// from the node send the resourceVersion they read as a precondition, so a stale read costs a 409
// and a GET, never a wrong write. One LIST of the nodes per minute per worker keeps it honest.
import type { V1Node } from '@kubernetes/client-node';
import { apiStatus, type Kube } from './kube.js';
import { listAllPages } from './listwatch.js';
import { cacheRegistry, ObjectCache, type CacheListener } from './object-cache.js';

export const nodeCache = cacheRegistry<Kube, V1Node>(
  (kube, _key, onStopped) =>
    new ObjectCache<V1Node>({
      kc: kube.config,
      path: '/api/v1/nodes', // literal: the RBAC test reads watched paths from the code
      list: () => listAllPages((page) => kube.core.listNode(page)),
      key: (n) => n.metadata?.name,
      idleMs: 120_000,
      segmentMs: 60_000,
      onStopped,
    }),
);

/** The node from the cache when it can say, else a GET; undefined when it does not exist. */
export async function readNode(kube: Kube, name: string): Promise<V1Node | undefined> {
  return nodeCache(kube).get(name) ?? freshNode(kube, name);
}

/** The node by a GET (after a conflict, or where a cached copy will not do); undefined when it does not exist. */
export async function freshNode(kube: Kube, name: string): Promise<V1Node | undefined> {
  try {
    return await kube.core.readNode({ name });
  } catch (err) {
    if (apiStatus(err) === 404) return undefined;
    throw err;
  }
}

/** One node's view of the cache for watchUntil's `cached`: the node alone (by uid), or nothing once it is deleted. */
export function oneNode(kube: Kube, name: string) {
  return {
    whenSynced: (ms: number) => nodeCache(kube).whenSynced(ms),
    subscribe: (listener: CacheListener<V1Node>) =>
      nodeCache(kube).subscribe((all) => {
        if (!all) return listener(undefined);
        const n = all.get(name);
        listener(new Map(n ? [[n.metadata?.uid ?? name, n]] : []));
      }),
  };
}
