// Per-node pod steps of a cycle: remove labels (take pods out of Services before the drain), and the
// Wait method's wait for pods annotated slipway.dev/do-not-disrupt=true to finish.
import { Context, heartbeat } from '@temporalio/activity';
import type { V1Pod } from '@kubernetes/client-node';
import { listNodePods } from '../drain/pods.js';
import { apiStatus, type Kube } from '../../kube/client.js';
import { watchUntil } from '../../kube/watch.js';
import { mergePatch } from '../../kube/patch.js';
import { DO_NOT_DISRUPT } from '../../api/names.js';

export interface WaitRules {
  ignorePodsLabels: Record<string, string[]>;
  ignoreNamespaces: string[];
}

/** Pods the Wait method waits for: running, annotated do-not-disrupt, not ignored (ignore rules win). */
export function podsToWaitFor(pods: V1Pod[], rules: WaitRules): V1Pod[] {
  return pods.filter((p) => {
    if (p.status?.phase !== 'Running' || p.metadata?.annotations?.[DO_NOT_DISRUPT] !== 'true') return false;
    if (rules.ignoreNamespaces.includes(p.metadata!.namespace!)) return false;
    const labels = p.metadata?.labels ?? {};
    return !Object.entries(rules.ignorePodsLabels).some(([k, vals]) => labels[k] !== undefined && vals.includes(labels[k]!));
  });
}

export function createCyclePodActivities(kube: Kube) {
  return {
    /** Removes the label keys from every pod on the node; repeats until a pass finds nothing to remove. */
    async removePodLabels(input: { nodeName: string; keys: string[] }): Promise<{ pods: string[] }> {
      if (!input.keys.length) return { pods: [] };
      const touched: string[] = [];
      const { items } = await listNodePods(kube, input.nodeName);
      for (const p of items) {
        const present = input.keys.filter((k) => p.metadata?.labels?.[k] !== undefined);
        if (!present.length) continue;
        try {
          await kube.core.patchNamespacedPod(
            { name: p.metadata!.name!, namespace: p.metadata!.namespace!, body: { metadata: { labels: Object.fromEntries(present.map((k) => [k, null])) } } },
            mergePatch,
          );
          touched.push(`${p.metadata!.namespace}/${p.metadata!.name}`);
        } catch (err) {
          if (apiStatus(err) !== 404) throw err;
        }
      }
      return { pods: touched.sort() };
    },

    /** Wait method: until no pod that must not be disrupted runs on the node, or the deadline. */
    async waitForDoNotDisruptPods(input: { nodeName: string; rules: WaitRules; timeoutMs: number }): Promise<{ done: boolean; remaining: string[] }> {
      let remaining: string[] = [];
      const { met } = await watchUntil<V1Pod>({
        kc: kube.config,
        path: '/api/v1/pods',
        fieldSelector: `spec.nodeName=${input.nodeName}`,
        list: () => listNodePods(kube, input.nodeName),
        done: (pods) => {
          remaining = podsToWaitFor([...pods.values()], input.rules).map((p) => `${p.metadata!.namespace}/${p.metadata!.name}`).sort();
          return remaining.length === 0;
        },
        timeoutMs: input.timeoutMs,
        onTick: () => heartbeat({ remaining: remaining.length }),
        signal: Context.current().cancellationSignal,
      });
      return { done: met, remaining };
    },
  };
}
