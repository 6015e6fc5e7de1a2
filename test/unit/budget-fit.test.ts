// #27.4 budgetTooSmall (shared/budget-fit.ts): which NodeDisruptionBudget keeps a maintenance
// without spec.rollout from ever finishing (it holds every node it cordons until Complete), with
// the limit resolved as the ledger resolves it (a percentage rounds up, the window in force, perZone).
import { NodeDisruptionBudgetSpec, type NodeDisruptionBudgetSpecInput } from '../../api/node-disruption-budget.js';
import { budgetTooSmall, tooSmallMessage } from '../../shared/budget-fit.js';
import type { BudgetView, NodeLabels } from '../../shared/disruption-budget.js';

const NOW = Date.parse('2026-06-01T12:30:00Z');
const budget = (name: string, s: Partial<NodeDisruptionBudgetSpecInput>): BudgetView => ({
  name, spec: NodeDisruptionBudgetSpec.parse({ maxDisrupted: 1, nodeSelector: { matchLabels: { pool: 'w' } }, ...s }), disrupted: [], waiting: [],
});
const node = (name: string, labels: Record<string, string> = { pool: 'w' }): NodeLabels => ({ name, labels });
const cluster = [node('w1', { pool: 'w', zone: 'a' }), node('w2', { pool: 'w', zone: 'a' }), node('w3', { pool: 'w', zone: 'b' }), node('w4', { pool: 'w', zone: 'b' }), node('o1', { pool: 'o' })];
const tooSmall = (selected: string[], ...budgets: BudgetView[]) => {
  const t = budgetTooSmall(selected, cluster, budgets, NOW);
  return t && tooSmallMessage(t);
};

describe('#27.4 budgetTooSmall: a budget below its covered selected nodes', () => {
  test('the issue\'s case: 3 nodes selected, a budget of 1', () => {
    expect(tooSmall(['w1', 'w2', 'w3'], budget('x', {}))).toBe('3 nodes selected; NodeDisruptionBudget x allows 1 at a time: this maintenance can finish only with spec.rollout');
  });

  test('a budget that holds every covered node at once, or covers none of them: fine', () => {
    expect(tooSmall(['w1', 'w2', 'w3'], budget('x', { maxDisrupted: 3 }))).toBeUndefined();
    expect(tooSmall(['w1'], budget('x', {}))).toBeUndefined();
    expect(tooSmall(['o1'], budget('x', {}))).toBeUndefined();
    expect(tooSmall([], budget('x', {}))).toBeUndefined();
  });

  test('a budget covering only part of the selection names that part', () => {
    expect(tooSmall(['w1', 'w2', 'o1'], budget('x', {}))).toBe('3 nodes selected, 2 under NodeDisruptionBudget x, which allows 1 at a time: this maintenance can finish only with spec.rollout');
  });

  test('a percentage rounds up over the nodes the budget selects (25% of 4 is 1, 50% of 4 is 2)', () => {
    expect(tooSmall(['w1', 'w2'], budget('pct', { maxDisrupted: '25%' }))).toMatch(/allows 1 at a time/);
    expect(tooSmall(['w1', 'w2'], budget('pct', { maxDisrupted: '50%' }))).toBeUndefined();
  });

  test('the limit in force now: a window lowering it counts (and is named); one not in force does not', () => {
    const inForce = budget('win', { maxDisrupted: 4, schedules: [{ schedule: '0 12 * * *', duration: '2h', maxDisrupted: 1 }] });
    expect(tooSmall(['w1', 'w2'], inForce)).toBe('2 nodes selected; NodeDisruptionBudget win allows 1 at a time (window "0 12 * * *" for 2h (until 2026-06-01T14:00Z): maxDisrupted 1): this maintenance can finish only with spec.rollout');
    const later = budget('win', { maxDisrupted: 4, schedules: [{ schedule: '0 20 * * *', duration: '2h', maxDisrupted: 1 }] });
    expect(tooSmall(['w1', 'w2'], later)).toBeUndefined();
  });

  test('a freeze (a limit of 0 now) is left out: a rollout would not help, and it passes', () => {
    expect(tooSmall(['w1', 'w2'], budget('freeze', { maxDisrupted: 0 }))).toBeUndefined();
  });

  test('perZone: a zone whose limit is below the selected nodes in it', () => {
    const zoned = budget('zoned', { maxDisrupted: 4, perZone: { topologyKey: 'zone', maxDisrupted: 1 } });
    expect(tooSmall(['w1', 'w3'], zoned)).toBeUndefined();
    expect(tooSmall(['w1', 'w3', 'w4'], zoned)).toBe('3 nodes selected, 2 in zone=b under NodeDisruptionBudget zoned, which allows 1 at a time per zone: this maintenance can finish only with spec.rollout');
  });

  test('several too small: the lowest limit, then by name; an invalid budget is left out', () => {
    const invalid: BudgetView = { name: 'a-broken', invalid: 'bad', selector: { matchLabels: { pool: 'w' } }, disrupted: [], waiting: [] };
    const t = budgetTooSmall(['w1', 'w2', 'w3'], cluster, [budget('b2', { maxDisrupted: 2 }), budget('c1', {}), budget('a1', {}), invalid], NOW);
    expect(t).toMatchObject({ budget: 'a1', limit: 1, covered: 3, selected: 3 });
  });

  test('selected nodes that no longer exist are not counted', () => {
    expect(tooSmall(['w1', 'gone-1', 'gone-2'], budget('x', {}))).toBeUndefined();
  });
});
