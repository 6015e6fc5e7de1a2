// The floor for the NodeMaintenance benchmark: the same plan walked by a bare script, with no
// Temporal, no status, no checks and no retries. Cordon every node; then per plan entry, evict every
// pod of that entry on every node at once and wait until all of them are deleted (the same barrier
// as A3: an entry is done when it is done on every node). What remains over the graces is what this
// machine's control plane and kwok need for the evictions and deletions alone, so Slipway's time over
// the floor is the cost of orchestration.
import type { Kube } from '../kube/client.js';
import { evictAll, podsGone } from './cycle-floor.js';
import { mergePatch } from '../kube/patch.js';

/** Seconds per entry, from the previous entry's last deletion (the start for the first) to this one's. */
export async function bareMaintenance(kube: Kube, nodes: string[], namespace: string, entries: Array<{ podPriority: number }>): Promise<number[]> {
  const spans: number[] = [];
  let prev = performance.now();
  await Promise.all(nodes.map((name) => kube.core.patchNode({ name, body: { spec: { unschedulable: true } } }, mergePatch)));
  const on = new Set(nodes);
  for (const e of entries) {
    const pods = (await kube.core.listNamespacedPod({ namespace })).items.filter(
      (p) => on.has(p.spec?.nodeName ?? '') && (p.spec?.priority ?? 0) < e.podPriority && !p.metadata?.deletionTimestamp,
    );
    await evictAll(kube, namespace, pods, 64);
    await podsGone(kube, namespace, pods);
    const now = performance.now();
    spans.push((now - prev) / 1000);
    prev = now;
  }
  await Promise.all(nodes.map((name) => kube.core.patchNode({ name, body: { spec: { unschedulable: null } } }, mergePatch)));
  return spans;
}
