// The floor for the cycle benchmark: the same surge-first replacement done by a bare script, with
// no Temporal, no status, no checks and no retries, batch by batch, every call of a batch in
// parallel. Its wall time is what this machine's control plane needs for the pod churn alone
// (every evicted pod is re-created, scheduled and started elsewhere), so Slipway's wall time over
// it is the cost of orchestration.
import type { V1Pod } from '@kubernetes/client-node';
import { apiStatus, type Kube } from '../kube/client.js';
import { mapLimit } from '../activities/drain/rate-limit.js';
import { watchUntil } from '../kube/watch.js';
import { ensureNode, fakeNode } from '../activities/providers/kwok-node.js';
import { mergePatch } from '../kube/patch.js';
import { NODE_GROUP_LABEL } from '../api/node-groups.js';

export async function bareCycle(kube: Kube, group: string, namespace: string, concurrency: number): Promise<number> {
  const old = (await kube.core.listNode({ labelSelector: `${NODE_GROUP_LABEL}=${group}` })).items.map((n) => n.metadata!.name!).sort();
  const started = performance.now();
  for (let i = 0; i < old.length; i += concurrency) {
    const batch = old.slice(i, i + concurrency);
    // Surge: the replacements first, Ready.
    const fresh = batch.map((_, j) => `${group}-floor-${i + j}`);
    await Promise.all(fresh.map((name) => ensureNode(kube.core, fakeNode({ name, nodeGroup: group }))));
    for (;;) {
      const nodes = (await kube.core.listNode({ labelSelector: `${NODE_GROUP_LABEL}=${group}` })).items;
      const ready = nodes.filter((n) => fresh.includes(n.metadata!.name!) && n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
      if (ready.length === fresh.length) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    // Cordon, evict everything, wait for it to leave, delete the nodes.
    await Promise.all(batch.map((name) => kube.core.patchNode({ name, body: { spec: { unschedulable: true } } }, mergePatch)));
    const pods: V1Pod[] = (await Promise.all(batch.map((n) => kube.core.listNamespacedPod({ namespace, fieldSelector: `spec.nodeName=${n}` })))).flatMap((l) => l.items);
    await evictAll(kube, namespace, pods, 16 * batch.length);
    await podsGone(kube, namespace, pods);
    await Promise.all(batch.map((name) => kube.core.deleteNode({ name })));
  }
  return (performance.now() - started) / 1000;
}

/**
 * Evicts every pod, `parallel` at a time. A refusal (429: a budget not yet computed, or spent for a
 * moment) is asked again every 200 ms for a minute at most: without it one refused pod held a batch
 * for podsGone's whole 5 minutes and the floor measured that. Nothing else a drain does.
 */
export async function evictAll(kube: Kube, namespace: string, pods: V1Pod[], parallel: number): Promise<void> {
  await mapLimit(pods, parallel, async (p) => {
    for (const until = Date.now() + 60_000; ; await new Promise((r) => setTimeout(r, 200))) {
      try {
        await kube.core.createNamespacedPodEviction({ name: p.metadata!.name!, namespace, body: { metadata: { name: p.metadata!.name!, namespace } } });
        return;
      } catch (err) {
        if (apiStatus(err) !== 429 || Date.now() > until) return;
      }
    }
  });
}

/** Until none of `pods` (by UID) is left in the namespace: one list, then the watch. */
export async function podsGone(kube: Kube, namespace: string, pods: V1Pod[]): Promise<void> {
  const uids = new Set(pods.map((p) => p.metadata!.uid!));
  await watchUntil<V1Pod>({
    kc: kube.config,
    path: `/api/v1/namespaces/${namespace}/pods`,
    list: async () => {
      const l = await kube.core.listNamespacedPod({ namespace });
      return { items: l.items, resourceVersion: l.metadata?.resourceVersion ?? '' };
    },
    done: (objects) => ![...objects.keys()].some((uid) => uids.has(uid)),
    timeoutMs: 300_000,
  });
}
