// Waiting for the DrainRules to change: a drain held by an invalid rule resumes as soon as the rule
// is fixed or deleted, without polling. Watch-based, heartbeats, cancellable (a signal arrived).
import { createHash } from 'node:crypto';
import { Context, heartbeat } from '@temporalio/activity';
import { CustomObjectsApi, type KubernetesObject } from '@kubernetes/client-node';
import { DRAIN_RULE } from '../../api/drain-rule.js';
import type { Kube } from '../kube.js';
import { watchUntil } from '../watch.js';

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

/**
 * Resolves when the DrainRules differ from `since` (the fingerprint the caller judged by), or from
 * the first list it makes when the caller has none.
 */
export function untilDrainRulesChange(kube: Kube, o: { timeoutMs: number; since?: string; signal?: AbortSignal; onTick?: () => void }) {
  let before = o.since;
  return watchUntil<KubernetesObject>({
    kc: kube.config,
    path: '/apis/slipway.dev/v1alpha1/drainrules', // literal: the RBAC test reads watched paths from the code
    list: drainRuleLister(kube),
    done: (objects) => {
      const now = rulesFingerprint(objects.values());
      before ??= now;
      return now !== before;
    },
    ...o,
  });
}

export function createRuleWaitActivities(kube: Kube) {
  return {
    /** Returns true once any DrainRule was created, changed or deleted since `since`, false after timeoutMs. */
    async waitForDrainRuleChange(input: { timeoutMs: number; since?: string }): Promise<boolean> {
      const ctx = Context.current();
      const { met } = await untilDrainRulesChange(kube, { timeoutMs: input.timeoutMs, since: input.since, signal: ctx.cancellationSignal, onTick: () => heartbeat() });
      return met;
    },
  };
}
