// The bridge's NodeDisruptionBudget kind: no workflow, only status. The ledger in each budget's
// status is written by the holders as they take and give back slots (activities/budget); between
// those writes the bridge keeps the rest of the status true: on creation, on every spec change and
// at each resync (30 s; a status write alone does not trigger one, or a field the apiserver prunes
// would make it write in a loop) it repairs leaks, writes the limit in force (a schedule window opening or
// closing, nodes added or removed) and the Valid condition, and records a Warning Event once per
// invalid generation (a spec the CRD's CEL let through but zod refuses: it admits nothing).
import type { KubernetesObject, V1ObjectMeta } from '@kubernetes/client-node';
import { API_VERSION } from '../../../api/names.js';
import { NODE_DISRUPTION_BUDGET } from '../../../api/node-disruption-budget.js';
import type { ObjectCache } from '../../../kube/controller/cache.js';
import { eventWriter, NotLeaderError, type EventWriterDeps } from '../kit.js';

export interface BudgetKubeObject extends KubernetesObject {
  metadata: V1ObjectMeta & { name: string; uid: string };
}

export class BudgetReconciler {
  /** name → the object version refreshed last and when: a status write (the holders', or this one's) alone waits for the resync. */
  private readonly refreshed = new Map<string, { as: string; atMs: number }>();
  private readonly event: ReturnType<typeof eventWriter>;

  constructor(
    private readonly o: {
      budgets: ObjectCache<BudgetKubeObject>;
      refresh: (name: string) => Promise<{ exists: boolean; invalid?: string }>;
      /** A budget whose spec has not changed is refreshed at most this often (below the resync interval). */
      minIntervalMs: number;
    } & EventWriterDeps,
  ) {
    this.event = eventWriter(NODE_DISRUPTION_BUDGET.kind, API_VERSION, o);
  }

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
    await this.event(obj, { type: 'Warning', reason: 'InvalidSpec', message: `${r.invalid}; the budget admits nothing it selects until fixed`, dedup: `invalid/${obj.metadata.generation ?? 0}` });
  }
}
