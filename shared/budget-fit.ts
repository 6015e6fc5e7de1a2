// Whether a maintenance without spec.rollout can ever finish under the NodeDisruptionBudgets, pure.
// Without a rollout a maintenance holds every node it has cordoned until Complete, so each budget
// must allow all the selected nodes it covers at once; one that allows fewer leaves the rest
// waiting for ever (issue 27). Said at once, in status and a Warning Event, not after a wait. The
// limit is the one in force now (shared/disruption-budget.ts limitInForce: maxDisrupted rounded up,
// or the lowest window in force), and perZone per zone. A limit of 0 (a freeze) is left out: a
// rollout would not help, and it passes. An invalid budget is left out too (it says so itself).
import { limitInForce, scaledLimit, selects, type BudgetView, type NodeLabels } from './disruption-budget.js';

export interface TooSmallBudget {
  budget: string;
  /** The maintenance's selected nodes, and how many of them this budget (or its zone) covers. */
  selected: number;
  covered: number;
  /** What it allows at once now, and why ("maxDisrupted 1", a window). */
  limit: number;
  limitReason: string;
  /** With perZone: the zone whose limit is too small (`key=value`). */
  zone?: string;
}

/**
 * The budget whose limit is below the number of `selected` nodes it covers (the lowest limit
 * first, then by name), or undefined when every budget can hold them all at once. `nodes` are the
 * cluster's Nodes (a percentage is of the nodes the budget selects, as the ledger counts it).
 */
export function budgetTooSmall(selected: readonly string[], nodes: readonly NodeLabels[], budgets: readonly BudgetView[], nowMs: number): TooSmallBudget | undefined {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const mine = selected.map((n) => byName.get(n)).filter((n): n is NodeLabels => !!n);
  const found: TooSmallBudget[] = [];
  for (const b of budgets) {
    if (!b.spec) continue;
    const covered = mine.filter((n) => selects(b, n));
    if (!covered.length) continue;
    const all = nodes.filter((n) => selects(b, n));
    const limit = limitInForce(b.spec, all.length, nowMs);
    if (limit.nodes > 0 && covered.length > limit.nodes) {
      found.push({ budget: b.name, selected: mine.length, covered: covered.length, limit: limit.nodes, limitReason: limit.reason });
      continue;
    }
    const perZone = b.spec.perZone;
    if (!perZone) continue;
    const key = perZone.topologyKey;
    for (const zone of [...new Set(covered.map((n) => n.labels[key]).filter((z): z is string => z !== undefined))].sort()) {
      const zoneLimit = scaledLimit(perZone.maxDisrupted, all.filter((n) => n.labels[key] === zone).length);
      const inZone = covered.filter((n) => n.labels[key] === zone).length;
      if (zoneLimit > 0 && inZone > zoneLimit) {
        found.push({ budget: b.name, selected: mine.length, covered: inZone, limit: zoneLimit, limitReason: `perZone.maxDisrupted ${perZone.maxDisrupted}`, zone: `${key}=${zone}` });
        break;
      }
    }
  }
  return found.sort((a, b) => a.limit - b.limit || a.budget.localeCompare(b.budget))[0];
}

/**
 * "3 nodes selected; NodeDisruptionBudget x allows 1 at a time: this maintenance can finish only with
 * spec.rollout", naming the covered part when the budget covers fewer than all, the zone, or the window.
 */
export function tooSmallMessage(t: TooSmallBudget): string {
  const nodes = (k: number) => `${k} node${k === 1 ? '' : 's'}`;
  const part = t.zone ? `, ${t.covered} in ${t.zone} under` : t.covered < t.selected ? `, ${t.covered} under` : ';';
  const window = t.limitReason.startsWith('window') ? ` (${t.limitReason})` : '';
  const allows = `allows ${t.limit} at a time${t.zone ? ' per zone' : ''}${window}`;
  return `${nodes(t.selected)} selected${part} NodeDisruptionBudget ${t.budget}${part === ';' ? ` ${allows}` : `, which ${allows}`}: this maintenance can finish only with spec.rollout`;
}
