// Reading the pods of a node: one paginated list by field selector, the worker's per-node pod cache
// the wave waits share, and the facts classification needs.
import type { V1Pod } from '@kubernetes/client-node';
import type { Kube } from '../../kube/client.js';
import { cacheRegistry, ObjectCache } from '../../kube/object-cache.js';
import { HOSTNAME_LABEL, UNSCHEDULABLE_TAINT } from '../../api/well-known.js';
import type { PodFacts } from './classify.js';

export async function listNodePods(kube: Kube, nodeName: string): Promise<{ items: V1Pod[]; resourceVersion: string }> {
  const items: V1Pod[] = [];
  let _continue: string | undefined;
  let resourceVersion = '';
  do {
    const page = await kube.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${nodeName}`, limit: 500, _continue });
    items.push(...page.items);
    _continue = page.metadata?._continue;
    resourceVersion = page.metadata?.resourceVersion ?? resourceVersion;
  } while (_continue);
  return { items, resourceVersion };
}

/**
 * The pods of one node, listed and watched once for all the wave waits of its drain instead of a
 * list and a watch per wave (issue 11). Stopped 30 s after its last wait.
 */
export const nodePods = cacheRegistry<Kube, V1Pod>(
  (kube, nodeName, onStopped) =>
    new ObjectCache<V1Pod>({
      kc: kube.config,
      path: '/api/v1/pods',
      fieldSelector: `spec.nodeName=${nodeName}`,
      list: () => listNodePods(kube, nodeName),
      key: (p) => p.metadata?.uid,
      idleMs: 30_000,
      segmentMs: 60_000,
      onStopped,
    }),
);

/**
 * The node a pod is pinned to (NM-6.6 (c)), when it is its own node: a required node affinity whose only
 * term is matchFields metadata.name In [node], or nodeSelector kubernetes.io/hostname=node.
 */
export function pinnedTo(pod: V1Pod): string | undefined {
  const node = pod.spec?.nodeName;
  if (!node) return undefined;
  if (pod.spec?.nodeSelector?.[HOSTNAME_LABEL] === node) return node;
  const terms = pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  const [term] = terms;
  if (terms.length !== 1 || !term || (term.matchExpressions ?? []).length > 0) return undefined;
  const fields = term.matchFields ?? [];
  const [f] = fields;
  return fields.length === 1 && f && f.key === 'metadata.name' && f.operator === 'In' && f.values?.length === 1 && f.values[0] === node ? node : undefined;
}

export function podFacts(pod: V1Pod): PodFacts {
  const owner = pod.metadata?.ownerReferences?.find((o) => o.controller);
  return {
    namespace: pod.metadata!.namespace!,
    name: pod.metadata!.name!,
    uid: pod.metadata!.uid!,
    labels: pod.metadata?.labels ?? {},
    annotations: pod.metadata?.annotations ?? {},
    phase: pod.status?.phase ?? 'Unknown',
    deletionTimestampMs: pod.metadata?.deletionTimestamp ? new Date(pod.metadata.deletionTimestamp).getTime() : undefined,
    controller: owner ? { kind: owner.kind, name: owner.name, apiVersion: owner.apiVersion } : undefined,
    hasEmptyDir: (pod.spec?.volumes ?? []).some((v) => v.emptyDir !== undefined),
    claims: (pod.spec?.volumes ?? []).flatMap((v) =>
      v.persistentVolumeClaim ? [`${pod.metadata!.namespace}/${v.persistentVolumeClaim.claimName}`] : [],
    ),
    priority: pod.spec?.priority ?? 0,
    toleratesUnschedulable: (pod.spec?.tolerations ?? []).some(
      (t) => (t.key === UNSCHEDULABLE_TAINT || (!t.key && t.operator === 'Exists')) && (!t.effect || t.effect === 'NoSchedule'),
    ),
    pinnedTo: pinnedTo(pod),
  };
}
