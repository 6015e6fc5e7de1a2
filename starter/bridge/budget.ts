// The bridge's NodeDisruptionBudget kind: no workflow, only status. The ledger in each budget's
// status is written by the holders as they take and give back slots (activities/budget); between
// those writes the bridge keeps the rest of the status true: on creation, on every spec change and
// at each resync (30 s; a status write alone does not trigger one, or a field the apiserver prunes
// would make it write in a loop) it repairs leaks, writes the limit in force (a schedule window opening or
// closing, nodes added or removed) and the Valid condition, and records a Warning Event once per
// invalid generation (a spec the CRD's CEL let through but zod refuses: it admits nothing).
import { CustomObjectsApi, type KubeConfig, type KubernetesObject, type V1ObjectMeta } from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import { GROUP, VERSION } from '../../api/crd.js';
import { NODE_DISRUPTION_BUDGET } from '../../api/node-disruption-budget.js';
import { createBudgetActivities, holderStateFrom } from '../../activities/budget/index.js';
import type { EventInput } from '../../activities/events.js';
import type { Kube } from '../../kube/client.js';
import { Controller } from '../../kube/controller/controller.js';
import type { ObjectCache } from '../../kube/controller/cache.js';
import type { ListPage } from '../../kube/controller/reflector.js';
import { collectionPath } from './objects.js';
import { NotLeaderError } from './reconciler.js';
import { reconcileHooks } from './metrics.js';
import type { Log } from '../../shared/log.js';
import { API_VERSION } from '../../api/names.js';

const RESOURCE = { group: GROUP, version: VERSION, plural: NODE_DISRUPTION_BUDGET.plural } as const;

export interface BudgetKubeObject extends KubernetesObject {
  metadata: V1ObjectMeta & { name: string; uid: string };
}

export class BudgetReconciler {
  /** name → the object version refreshed last and when: a status write (the holders', or this one's) alone waits for the resync. */
  private readonly refreshed = new Map<string, { as: string; atMs: number }>();

  constructor(
    private readonly o: {
      budgets: ObjectCache<BudgetKubeObject>;
      refresh: (name: string) => Promise<{ exists: boolean; invalid?: string }>;
      recordEvent: (e: EventInput) => Promise<void>;
      isLeader: () => boolean;
      /** A budget whose spec has not changed is refreshed at most this often (below the resync interval). */
      minIntervalMs: number;
    },
  ) {}

  async reconcile(key: string): Promise<void> {
    if (!this.o.isLeader()) throw new NotLeaderError();
    const obj = this.o.budgets.get(key);
    const name = key.replace(/^\//, '');
    if (!obj) {
      this.refreshed.delete(name);
      return; // deleted: its ledger went with it
    }
    const as = `${obj.metadata.uid}/${obj.metadata.generation ?? 0}`;
    const last = this.refreshed.get(name);
    if (last?.as === as && Date.now() - last.atMs < this.o.minIntervalMs) return;
    const r = await this.o.refresh(obj.metadata.name);
    this.refreshed.set(name, { as, atMs: Date.now() });
    if (!r.exists || r.invalid === undefined) return;
    await this.o.recordEvent({
      involved: { kind: NODE_DISRUPTION_BUDGET.kind, apiVersion: API_VERSION, name: obj.metadata.name, uid: obj.metadata.uid },
      type: 'Warning',
      reason: 'InvalidSpec',
      message: `${r.invalid}; the budget admits nothing it selects until fixed`,
      dedupKey: `invalid/${obj.metadata.uid}/${obj.metadata.generation ?? 0}`,
    });
  }
}

/** The NodeDisruptionBudget kind's controller for one leadership term. */
export function budgetTerm(o: { kube: Kube; kc: KubeConfig; client: Client; resyncIntervalMs?: number; isLeader: () => boolean; recordEvent: (e: EventInput) => Promise<void>; log: Log }) {
  const custom = o.kc.makeApiClient(CustomObjectsApi);
  const controller = new Controller({
    kind: 'NodeDisruptionBudget',
    kc: o.kc,
    resyncIntervalMs: o.resyncIntervalMs,
    quietError: (err) => err instanceof NotLeaderError,
    ...reconcileHooks(NODE_DISRUPTION_BUDGET.kind),
    log: o.log,
  });
  const budgets = controller.watchPrimary<BudgetKubeObject>({
    path: collectionPath(RESOURCE),
    list: async (page) => (await custom.listClusterCustomObject({ ...RESOURCE, ...page })) as ListPage<BudgetKubeObject>,
  });
  const ledger = createBudgetActivities(o.kube, { holderState: holderStateFrom(o.client) });
  const minIntervalMs = Math.floor((o.resyncIntervalMs ?? 30_000) * 0.8);
  const reconciler = new BudgetReconciler({ budgets, refresh: (name) => ledger.refreshDisruptionBudget(name), recordEvent: o.recordEvent, isLeader: o.isLeader, minIntervalMs });
  return { controller, reconciler, budgets };
}
