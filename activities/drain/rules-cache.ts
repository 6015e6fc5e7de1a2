// One DrainRule reflector per worker process: the drain's classify and its waits read the rules
// from it instead of each listing (and watching) them. In a NodeMaintenance those lists were a
// sixth of the drain's requests (issue 11).
//
// Freshness: a caller passes the fingerprint it last judged by (DrainSnapshot.drainRulesSeen); the
// cache answers only when it is synced and agrees with it. Otherwise the caller lists, as before.
// So a drain's first classify always lists (a rule created just before the drain is never missed
// for the cache's lag), and a rule created mid-drain is seen when the cache sees it, as the per-wait
// watch saw it: a stream is trusted a minute at most, then listed again, and a failed one makes the
// cache answer nothing (the waits on it then watch for themselves) until its next list. The
// reflector is kube/object-cache.ts's, as for nodes and pods.
import { createHash } from 'node:crypto';
import { CustomObjectsApi, type KubernetesObject } from '@kubernetes/client-node';
import { DRAIN_RULE } from '../../api/drain-rule.js';
import type { Kube } from '../../kube/client.js';
import { cacheRegistry, ObjectCache } from '../../kube/object-cache.js';
import { API_VERSION } from '../../api/names.js';

/** Identity of the set of DrainRules: any create, change or delete alters it. Short: it travels in workflow history. */
export const rulesFingerprint = (objects: Iterable<KubernetesObject>) =>
  createHash('sha256')
    .update([...objects].map((o) => `${o.metadata?.uid}@${o.metadata?.resourceVersion}`).sort().join(','))
    .digest('hex')
    .slice(0, 16);

/** One list of every DrainRule, as watchUntil wants it. */
export function drainRuleLister(kube: Kube): () => Promise<{ items: KubernetesObject[]; resourceVersion: string }> {
  const api = kube.config.makeApiClient(CustomObjectsApi);
  return async () => {
    const res = (await api.listClusterCustomObject({ group: DRAIN_RULE.group, version: DRAIN_RULE.version, plural: DRAIN_RULE.plural })) as {
      items: KubernetesObject[];
      metadata?: { resourceVersion?: string };
    };
    return { items: res.items, resourceVersion: res.metadata?.resourceVersion ?? '' };
  };
}

/** The process's DrainRule cache for this client (kube/object-cache.ts; started on first use). */
export const drainRuleCache = cacheRegistry<Kube, KubernetesObject>(
  (kube, _key, onStopped) =>
    new ObjectCache<KubernetesObject>({
      kc: kube.config,
      path: `/apis/${API_VERSION}/drainrules`, // literal resource: the RBAC test reads watched paths from the code
      list: drainRuleLister(kube),
      key: (r) => r.metadata?.uid,
      idleMs: 120_000,
      // As the per-wait watch it replaces: no stream is trusted longer, then a fresh list.
      segmentMs: 60_000,
      onStopped,
    }),
);

/** The rules, when the cache is synced and agrees with what the caller judged by (`since`); else undefined (the caller lists). */
export function agreeingRules(kube: Kube, since: string | undefined): KubernetesObject[] | undefined {
  const now = drainRuleCache(kube).current();
  if (since === undefined || !now || rulesFingerprint(now.values()) !== since) return undefined;
  return [...now.values()];
}
