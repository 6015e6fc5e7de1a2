// Waiting for the DrainRules to change: a drain held by an invalid rule resumes as soon as the rule
// is fixed or deleted, without polling. Watch-based, heartbeats, cancellable (a signal arrived).
import { Context, heartbeat } from '@temporalio/activity';
import { CustomObjectsApi, type KubernetesObject } from '@kubernetes/client-node';
import { DRAIN_RULE } from '../../api/drain-rule.js';
import type { Kube } from '../kube.js';
import { watchUntil } from '../watch.js';

const fingerprint = (objects: Map<string, KubernetesObject>) =>
  [...objects.values()].map((o) => `${o.metadata?.uid}@${o.metadata?.resourceVersion}`).sort().join(',');

export function createRuleWaitActivities(kube: Kube) {
  const api = kube.config.makeApiClient(CustomObjectsApi);
  const list = async () => {
    const res = (await api.listClusterCustomObject({ group: DRAIN_RULE.group, version: DRAIN_RULE.version, plural: DRAIN_RULE.plural })) as {
      items: KubernetesObject[];
      metadata?: { resourceVersion?: string };
    };
    return { items: res.items, resourceVersion: res.metadata?.resourceVersion ?? '' };
  };
  return {
    /** Returns true once any DrainRule was created, changed or deleted, false after timeoutMs. */
    async waitForDrainRuleChange(input: { timeoutMs: number }): Promise<boolean> {
      const ctx = Context.current();
      let before: string | undefined;
      const { met } = await watchUntil<KubernetesObject>({
        kc: kube.config,
        path: '/apis/slipway.dev/v1alpha1/drainrules', // literal: the RBAC test reads watched paths from the code
        list,
        done: (objects) => {
          const now = fingerprint(objects);
          before ??= now;
          return now !== before;
        },
        timeoutMs: input.timeoutMs,
        onTick: () => heartbeat(),
        signal: ctx.cancellationSignal,
      });
      return met;
    },
  };
}
