// The maintenance side of the planner (workflows/maintenance/progress.ts): A3, NM-1.6, drainStatus.drainMessage.
import { effectivePlan, type PlanEntry } from '../../api/drain-plan.js';
import { advance, drainStatusMessage, firstNotReady, limitedOn, reachedDrainTargets, sumCounts, waitingForNode, type ProgressNode } from '../../workflows/maintenance/progress.js';

const D = (p: number, app?: string): PlanEntry => (app ? { podType: 'Default', podPriority: p, podSelector: { matchLabels: { app } } } : { podType: 'Default', podPriority: p });
const DS = (p: number): PlanEntry => ({ podType: 'DaemonSet', podPriority: p });
const node = (name: string, lanes: PlanEntry[], finished = true, extra: Partial<ProgressNode> = {}): ProgressNode => ({ name, lanes, finished, ...extra });

describe('A3 advancing', () => {
  const plan = effectivePlan([D(5000), D(15000), DS(3000)]);
  test('A3 M moves on when every node has reached its entry and is finished, and repeats while that holds', () => {
    expect(advance(plan, 0, [node('one', [D(5000)]), node('two', [D(5000)])])).toBe(1);
    // T(N) already reaches the next entries (fast-forwarded): they pass in one evaluation (NM-3.5).
    expect(advance(plan, 0, [node('one', [D(1e9)])])).toBe(3);
  });
  test('A3 M stays while a node is not finished or has not reached the entry', () => {
    expect(advance(plan, 0, [node('one', [D(5000)]), node('two', [D(5000)], false)])).toBe(0);
    expect(advance(plan, 1, [node('one', [D(10000)]), node('two', [D(15000)])])).toBe(1);
  });
  test('A3 a claimed node takes no part; a gone node counts as reached and finished', () => {
    expect(advance(plan, 0, [node('one', [D(5000)]), node('two', [], false, { claimed: true })])).toBe(1);
    expect(advance(plan, 0, [node('one', [D(5000)]), node('two', [], false, { gone: true })])).toBe(1);
  });
  test('A3 past the last entry is plan.length, and the index never goes back', () => {
    expect(advance(plan, plan.length - 1, [node('one', [D(2147483647), DS(2147483647), { podType: 'Static', podPriority: 2147483647 }])])).toBe(plan.length);
    expect(advance(plan, plan.length, [node('one', [], false)])).toBe(plan.length);
    expect(advance(plan, 4, [node('one', [D(5000)])])).toBe(4);
  });
  test('firstNotReady: the first other node by name that is not ready for the current entry', () => {
    const nodes = [node('three', [D(10000)]), node('two', [D(5000)], false), node('one', [D(5000)])];
    expect(firstNotReady(effectivePlan([D(10000)]), 0, nodes, 'three')?.name).toBe('one');
    expect(firstNotReady(plan, 0, nodes, 'one')?.name).toBe('two');
    expect(firstNotReady(plan, plan.length, nodes)).toBeUndefined();
  });
  test('limitedOn: from a node report, M is limited by L(N) only while T(N) does not reach its entry', () => {
    const a = { name: 'maintenance-a', plan, index: 1 };
    expect(limitedOn({ limiting: 'maintenance-b', lanes: [D(10000)] }, a)).toEqual(['maintenance-b']);
    expect(limitedOn({ limiting: 'maintenance-b', lanes: [D(15000)] }, a)).toEqual([]);
    expect(limitedOn({ limiting: 'maintenance-a', lanes: [D(10000)] }, a)).toEqual([]);
    expect(limitedOn({ limiting: 'maintenance-b', lanes: [D(10000)], gone: true }, a)).toEqual([]);
    expect(limitedOn({ limiting: 'maintenance-b', lanes: [] }, { ...a, index: plan.length })).toEqual([]);
  });
  test('E2 waitingForNode: b on three waits for node one, limited there by maintenance-a', () => {
    const b = { name: 'maintenance-b', plan: effectivePlan([D(10000), D(15000), DS(4000)]), index: 0 };
    const nodes = [
      { ...node('one', [D(5000)]), limiting: 'maintenance-a' },
      { ...node('three', [D(10000)]), limiting: 'maintenance-b' },
    ];
    expect(waitingForNode(b, nodes, 'three')).toEqual({ name: 'one', limitedBy: 'maintenance-a' });
    expect(waitingForNode(b, nodes, 'one')).toBeUndefined();
  });
});

describe('NM-1.6 drainStatus', () => {
  test('NM-1.6 reachedDrainTargets is the per-lane minimum over existing nodes; a lane missing on any node is omitted', () => {
    expect(reachedDrainTargets([node('one', [D(10000)]), node('four', [D(2000)])])).toEqual([D(2000)]);
    expect(reachedDrainTargets([node('one', [D(1000), D(2000, 'pg')]), node('two', [D(5000), D(5000, 'pg'), DS(7)])])).toEqual([D(1000), D(2000, 'pg')]);
    expect(reachedDrainTargets([node('one', [D(1000), D(1000, 'pg')]), node('two', [D(5000)])])).toEqual([D(1000)]);
  });
  test('NM-1.6 gone nodes leave reachedDrainTargets; no existing node gives []', () => {
    expect(reachedDrainTargets([node('one', [D(9000)]), node('two', [D(1)], true, { gone: true })])).toEqual([D(9000)]);
    expect(reachedDrainTargets([node('two', [D(1)], true, { gone: true })])).toEqual([]);
    expect(reachedDrainTargets([])).toEqual([]);
  });
  test('NM-1.6 the counts are sums over the nodes', () => {
    expect(
      sumCounts([
        { podsPendingEvictionRequest: 1, activeEvictionRequests: 2, podsBlocked: 1, podsKept: 0 },
        { podsPendingEvictionRequest: 3, activeEvictionRequests: 0, podsBlocked: 0, podsKept: 2 },
      ]),
    ).toEqual({ podsPendingEvictionRequest: 4, activeEvictionRequests: 2, podsBlocked: 1, podsKept: 2 });
    expect(sumCounts([])).toEqual({ podsPendingEvictionRequest: 0, activeEvictionRequests: 0, podsBlocked: 0, podsKept: 0 });
  });
  test('drainStatus.drainMessage: Drained, Waiting for X., Draining (limited by X, Y), Draining', () => {
    expect(drainStatusMessage(true, [{ finished: false, limitedBy: ['x'] }])).toBe('Drained');
    expect(drainStatusMessage(false, [{ finished: true, limitedBy: ['maintenance-a'] }, { finished: true, limitedBy: [] }])).toBe('Waiting for maintenance-a.');
    expect(drainStatusMessage(false, [{ finished: false, limitedBy: ['y'] }, { finished: true, limitedBy: ['x'] }])).toBe('Draining (limited by x, y)');
    expect(drainStatusMessage(false, [{ finished: true, limitedBy: ['y'] }, { finished: true, limitedBy: ['x'] }])).toBe('Draining (limited by x, y)');
    expect(drainStatusMessage(false, [{ finished: false, limitedBy: [] }])).toBe('Draining');
    expect(drainStatusMessage(false, [{ finished: false, limitedBy: ['x'], gone: true }, { finished: true, limitedBy: ['z'] }])).toBe('Waiting for z.');
    // Issue 15: nodes a NodeDisruptionBudget holds back (not cordoned yet) are counted, with the first refusal.
    const w = 'waiting for NodeDisruptionBudget nb: 2 of 2 nodes disrupted';
    expect(drainStatusMessage(false, [{ finished: false, limitedBy: [], budgetWait: w }, { finished: false, limitedBy: [], budgetWait: w }, { finished: true, limitedBy: [] }])).toBe(`Draining; 2 nodes ${w}`);
    expect(drainStatusMessage(false, [{ finished: false, limitedBy: ['y'], budgetWait: w }])).toBe(`Draining (limited by y); 1 node ${w}`);
    expect(drainStatusMessage(false, [{ finished: false, limitedBy: [], budgetWait: w, gone: true }])).toBe('Draining');
  });
});
