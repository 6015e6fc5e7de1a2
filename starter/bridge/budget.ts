// The bridge's NodeDisruptionBudget kind: no workflow, only status. The ledger in each budget's
// status is written by the holders as they take and give back slots (activities/budget); between
// those writes the bridge keeps the rest of the status true: on every change of the object and at
// each resync (30 s) it repairs leaks, writes the limit in force (a schedule window opening or
// closing, nodes added or removed) and the Valid condition, and records a Warning Event once per
// invalid generation (a spec the CRD's CEL let through but zod refuses: it admits nothing).
import { CustomObjectsApi, type KubeConfig, type KubernetesObject, type V1ObjectMeta } from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import { GROUP, VERSION } from '../../api/crd.js';
import { NODE_DISRUPTION_BUDGET } from '../../api/node-disruption-budget.js';
import { createBudgetActivities, holderStateFrom } from '../../activities/budget/index.js';
import type { EventInput } from '../../activities/events.js';
import type { Kube } from '../../activities/kube.js';
import { Controller } from '../controller/controller.js';
import type { ObjectCache } from '../controller/cache.js';
import type { ListPage } from '../controller/reflector.js';
import { collectionPath } from './objects.js';
import { NotLeaderError } from './reconciler.js';
import { reconcileErrors } from './metrics.js';

const RESOURCE = { group: GROUP, version: VERSION, plural: NODE_DISRUPTION_BUDGET.plural } as const;

export interface BudgetKubeObject extends KubernetesObject {
  metadata: V1ObjectMeta & { name: string; uid: string };
}

export class BudgetReconciler {
  constructor(
    private readonly o: {
      budgets: ObjectCache<BudgetKubeObject>;
      refresh: (name: string) => Promise<{ exists: boolean; invalid?: string }>;
      recordEvent: (e: EventInput) => Promise<void>;
      isLeader: () => boolean;
    },
  ) {}

  async reconcile(key: string): Promise<void> {
    if (!this.o.isLeader()) throw new NotLeaderError();
    const obj = this.o.budgets.get(key);
    if (!obj) return; // deleted: its ledger went with it
    const r = await this.o.refresh(obj.metadata.name);
    if (!r.exists || r.invalid === undefined) return;
    await this.o.recordEvent({
      involved: { kind: NODE_DISRUPTION_BUDGET.kind, apiVersion: `${GROUP}/${VERSION}`, name: obj.metadata.name, uid: obj.metadata.uid },
      type: 'Warning',
      reason: 'InvalidSpec',
      message: `${r.invalid}; the budget admits nothing it selects until fixed`,
      dedupKey: `invalid/${obj.metadata.uid}/${obj.metadata.generation ?? 0}`,
    });
  }
}

/** The NodeDisruptionBudget kind's controller for one leadership term. */
export function budgetTerm(o: { kube: Kube; kc: KubeConfig; client: Client; resyncIntervalMs?: number; isLeader: () => boolean; recordEvent: (e: EventInput) => Promise<void>; log: (m: string) => void }) {
  const custom = o.kc.makeApiClient(CustomObjectsApi);
  const controller = new Controller({
    kc: o.kc,
    resyncIntervalMs: o.resyncIntervalMs,
    quietError: (err) => err instanceof NotLeaderError,
    onReconcileError: () => reconcileErrors.inc({ kind: NODE_DISRUPTION_BUDGET.kind }),
    log: o.log,
  });
  const budgets = controller.watchPrimary<BudgetKubeObject>({
    path: collectionPath(RESOURCE),
    list: async (page) => (await custom.listClusterCustomObject({ ...RESOURCE, ...page })) as ListPage<BudgetKubeObject>,
  });
  const ledger = createBudgetActivities(o.kube, { holderState: holderStateFrom(o.client) });
  const reconciler = new BudgetReconciler({ budgets, refresh: (name) => ledger.refreshDisruptionBudget(name), recordEvent: o.recordEvent, isLeader: o.isLeader });
  return { controller, reconciler, budgets };
}
