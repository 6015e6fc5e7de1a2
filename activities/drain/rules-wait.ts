// Waiting for the DrainRules to change: a drain held by an invalid rule resumes as soon as the rule
// is fixed or deleted, without polling. Watch-based, heartbeats, cancellable (a signal arrived).
import { Context, heartbeat } from '@temporalio/activity';
import type { KubernetesObject } from '@kubernetes/client-node';
import type { Kube } from '../../kube/client.js';
import { watchUntil } from '../../kube/watch.js';
import { agreeingRules, drainRuleCache, drainRuleLister, rulesFingerprint } from './rules-cache.js';
import { API_VERSION } from '../../api/names.js';

/**
 * Resolves when the DrainRules differ from `since` (the fingerprint the caller judged by), or from
 * the first list it makes when the caller has none.
 */
export async function untilDrainRulesChange(
  kube: Kube,
  o: { timeoutMs: number; since?: string; signal?: AbortSignal; onTick?: () => void },
): Promise<{ met: boolean }> {
  let before = o.since;
  return watchUntil<KubernetesObject>({
    kc: kube.config,
    path: `/apis/${API_VERSION}/drainrules`, // literal resource: the RBAC test reads watched paths from the code
    list: drainRuleLister(kube),
    // The process's cache while it answers, if it agrees with `since` now (one behind it would end the wait at once).
    ...(o.since === undefined || agreeingRules(kube, o.since) ? { cached: drainRuleCache(kube) } : {}),
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
