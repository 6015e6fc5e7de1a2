// The worker's Node caches (kube/object-cache.ts), one per node being worked on: the node coordinator's
// writes, the drain's node reads and the wave wait's watch on its node use it instead of a GET, or
// a list and a watch, each. In a NodeMaintenance those were a quarter of the drain's requests (issue 11).
//
// Freshness: a read answers from the cache only while it is synced; else it GETs, as before. A node
// the synced cache does not have is GOT too (it may have just joined). Writers that compute a patch
// from the node send the resourceVersion they read as a precondition, so a stale read costs a 409
// and a GET, never a wrong write. A list of the one node each minute keeps it honest.
import type { V1Node } from '@kubernetes/client-node';
import { apiStatus, type Kube } from '../kube/client.js';
import { cacheRegistry, ObjectCache, type CacheListener } from '../kube/object-cache.js';

/**
 * One node's cache (a list and watch by metadata.name), started by its first read and stopped two
 * minutes after its last: only the nodes Slipway is working on are watched, so a worker holds a few
 * Nodes whatever the cluster's size (a cache of every Node would list them all each minute).
 */
export const nodeCache = cacheRegistry<Kube, V1Node>(
  (kube, name, onStopped) =>
    new ObjectCache<V1Node>({
      ...nodeByName(kube, name),
      key: (n) => n.metadata?.name,
      idleMs: 120_000,
      segmentMs: 60_000,
      onStopped,
    }),
);

/**
 * Where to list and watch one node by name (zero or one item): the node caches, the wave wait's
 * fallback watch and the hooks wait all use this.
 */
export function nodeByName(kube: Kube, name: string) {
  return {
    kc: kube.config,
    path: '/api/v1/nodes', // literal: the RBAC test reads watched paths from the code
    fieldSelector: `metadata.name=${name}`,
    list: async (): Promise<{ items: V1Node[]; resourceVersion: string }> => {
      const l = await kube.core.listNode({ fieldSelector: `metadata.name=${name}` });
      return { items: l.items, resourceVersion: l.metadata?.resourceVersion ?? '' };
    },
  };
}

/** The node from the cache when it can say, else a GET; undefined when it does not exist. */
export async function readNode(kube: Kube, name: string): Promise<V1Node | undefined> {
  return nodeCache(kube, name).get(name) ?? freshNode(kube, name);
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
    whenSynced: (ms: number) => nodeCache(kube, name).whenSynced(ms),
    subscribe: (listener: CacheListener<V1Node>) =>
      nodeCache(kube, name).subscribe((all) => {
        if (!all) return listener(undefined);
        const n = all.get(name);
        listener(new Map(n ? [[n.metadata?.uid ?? name, n]] : []));
      }),
  };
}
