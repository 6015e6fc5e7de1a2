// Can a maintenance without spec.rollout finish under the NodeDisruptionBudgets? Read-only: lists
// the budgets and the Nodes, and answers with shared/budget-fit.ts's judgement as the CannotFinish
// message (none when every budget can hold all the selected nodes it covers at once).
import { CustomObjectsApi } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../../api/crd.js';
import { NODE_DISRUPTION_BUDGET } from '../../api/node-disruption-budget.js';
import { budgetTooSmall, tooSmallMessage } from '../../shared/budget-fit.js';
import { apiStatus, type Kube } from '../../kube/client.js';
import { budgetView } from './index.js';

export interface BudgetFitInput {
  /** The maintenance's selected nodes. */
  nodes: string[];
}

export interface BudgetFitResult {
  /** Set when some budget allows fewer of these nodes at once than it covers. */
  cannotFinish?: string;
}

export function createBudgetFitActivities(kube: Kube, now: () => number = Date.now) {
  const api = kube.config.makeApiClient(CustomObjectsApi);
  return {
    async maintenanceBudgetFit(input: BudgetFitInput): Promise<BudgetFitResult> {
      if (!input.nodes.length) return {};
      const list = await api.listClusterCustomObject({ group: GROUP, version: VERSION, plural: NODE_DISRUPTION_BUDGET.plural }).catch((err: unknown) => {
        if (apiStatus(err) === 404) return { items: [] }; // the CRD is not installed: no budget limits anything
        throw err;
      });
      const budgets = (list as { items: Parameters<typeof budgetView>[0][] }).items.map(budgetView);
      if (!budgets.length) return {};
      const nodes = (await kube.core.listNode()).items.map((n) => ({ name: n.metadata!.name!, labels: n.metadata?.labels ?? {} }));
      const t = budgetTooSmall(input.nodes, nodes, budgets, now());
      return t ? { cannotFinish: tooSmallMessage(t) } : {};
    },
  };
}
