// The NodeDisruptionBudget kind for one leadership term: its controller and its reconciler, which
// refreshes each budget's status through the holders' own ledger code (activities/budget).
import { NODE_DISRUPTION_BUDGET } from '../../../api/node-disruption-budget.js';
import { createBudgetActivities, holderStateFrom } from '../../../activities/budget/index.js';
import { createEventActivities } from '../../../activities/events.js';
import type { BridgeOptions } from '../bridge.js';
import { clusterCollection, kindController } from '../kit.js';
import { BudgetReconciler, type BudgetKubeObject } from './reconciler.js';

export function budgetTerm(o: BridgeOptions) {
  const controller = kindController(NODE_DISRUPTION_BUDGET.kind, o.kube.config, o);
  const budgets = controller.watchPrimary<BudgetKubeObject>(clusterCollection(o.kube.config, NODE_DISRUPTION_BUDGET));
  const ledger = createBudgetActivities(o.kube, { holderState: holderStateFrom(o.client) });
  const minIntervalMs = Math.floor((o.resyncIntervalMs ?? 30_000) * 0.8);
  const reconciler = new BudgetReconciler({
    budgets,
    refresh: (name) => ledger.refreshDisruptionBudget(name),
    recordEvent: createEventActivities(o.kube).recordEvent,
    isLeader: o.isLeader,
    stats: o.stats,
    log: o.log,
    minIntervalMs,
  });
  return { controller, reconciler, budgets };
}
