// Waiting for a NodeDisruptionBudget slot (issue 26: idle costs nothing), the one wait of every
// holder (a maintenance's node coordinator, a CLI drain, a CycleNodeRequest): one long, heartbeating
// activity that asks the ledger whenever a budget changes (a slot freed, a limit raised, a window
// opened) and every KEEP_ALIVE_MS even without one (the ledger drops a waiter silent for
// WAITER_STALE_MS), and returns only when the answer changes (a node granted, or refused in other
// words: status then says so) or its window ends. A holder waiting for hours costs its workflow a
// renewal per window, not history per ask. The budgets are watched through one shared cache.
import { API_VERSION } from '../../api/names.js';
import { Context, heartbeat } from '@temporalio/activity';
import { CustomObjectsApi, type KubernetesObject } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../../api/crd.js';
import { NODE_DISRUPTION_BUDGET } from '../../api/node-disruption-budget.js';
import type { Kube } from '../../kube/client.js';
import { cacheRegistry, ObjectCache, type CacheListener } from '../../kube/object-cache.js';
import { watchUntil } from '../../kube/watch.js';
import { WAITER_STALE_MS, createBudgetActivities, type AcquireResult, type DisruptionInput } from './index.js';

/** A waiting holder asks again this often even when no budget changed: its place in the queue. */
export const KEEP_ALIVE_MS = WAITER_STALE_MS / 3;

export interface DisruptionWaitInput extends DisruptionInput {
  /** node → the refusal the workflow shows now: an answer that differs ends the wait. */
  refusals: Record<string, string>;
  /** The window: asked for 0, it asks once and answers. */
  timeoutMs: number;
}

/** Resolves at the next change of any budget, or after `maxMs`; rejects when `signal` aborts. */
export type BudgetChange = (maxMs: number, signal: AbortSignal) => Promise<void>;

/** The wait over any ledger and any source of budget changes (the real ones, or a test's). */
export function waitForDisruptionWith(acquire: (input: DisruptionInput) => Promise<AcquireResult>, nextChange: BudgetChange, keepAliveMs = KEEP_ALIVE_MS) {
  return async (input: DisruptionWaitInput): Promise<AcquireResult> => {
    const signal = Context.current().cancellationSignal;
    const ends = Date.now() + input.timeoutMs;
    for (;;) {
      const r = await acquire({ holder: input.holder, nodes: input.nodes });
      heartbeat(r.waiting);
      const changed = r.waiting.length < input.nodes.length || r.waiting.some((w) => input.refusals[w.node] !== w.reason);
      if (changed || Date.now() >= ends) return r;
      await nextChange(Math.min(keepAliveMs, ends - Date.now()), signal); // rejects when cancelled (a signal woke the workflow)
    }
  };
}

/** Every NodeDisruptionBudget, shared by the worker's budget waits (one list and watch, not one per waiter). */
const budgetCache = cacheRegistry<Kube, KubernetesObject>((kube, _key, onStopped) => {
  const custom = kube.config.makeApiClient(CustomObjectsApi);
  return new ObjectCache<KubernetesObject>({
    kc: kube.config,
    path: `/apis/${API_VERSION}/nodedisruptionbudgets`, // this form: the RBAC test reads watched paths from the code
    list: async () => {
      const l = (await custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: NODE_DISRUPTION_BUDGET.plural })) as { items: KubernetesObject[]; metadata?: { resourceVersion?: string } };
      return { items: l.items, resourceVersion: l.metadata?.resourceVersion ?? '' };
    },
    key: (o) => o.metadata?.uid,
    idleMs: 120_000,
    segmentMs: 5 * 60_000,
    onStopped,
  });
});

/** The next change of any budget (its ledger, its spec, one created or deleted) after the call. */
export function budgetChanges(kube: Kube): BudgetChange {
  const custom = kube.config.makeApiClient(CustomObjectsApi);
  return async (maxMs, signal) => {
    let first: Map<string, string> | undefined;
    const cache = budgetCache(kube);
    await watchUntil<KubernetesObject>({
      kc: kube.config,
      path: `/apis/${API_VERSION}/nodedisruptionbudgets`,
      list: async () => {
        const l = (await custom.listClusterCustomObject({ group: GROUP, version: VERSION, plural: NODE_DISRUPTION_BUDGET.plural })) as { items: KubernetesObject[]; metadata?: { resourceVersion?: string } };
        return { items: l.items, resourceVersion: l.metadata?.resourceVersion ?? '' };
      },
      cached: { whenSynced: (ms) => cache.whenSynced(ms), subscribe: (l: CacheListener<KubernetesObject>) => cache.subscribe(l) },
      done: (objects) => {
        const now = new Map([...objects].map(([uid, o]) => [uid, o.metadata?.resourceVersion ?? '']));
        first ??= now;
        return now.size !== first.size || [...now].some(([uid, rv]) => first!.get(uid) !== rv);
      },
      timeoutMs: Math.max(0, maxMs),
      signal,
    });
  };
}

export function createBudgetWaitActivities(kube: Kube) {
  return { waitForDisruption: waitForDisruptionWith(createBudgetActivities(kube).acquireDisruption, budgetChanges(kube)) };
}
