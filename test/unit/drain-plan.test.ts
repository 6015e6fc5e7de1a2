// KEP-4212 drain-plan arithmetic (api/drain-plan.ts): effective plan, ordering rules, lanes, reached.
import {
  DEFAULT_DRAIN_PLAN,
  MAX_PRIORITY,
  compareEntries,
  effectivePlan,
  entryMatches,
  entryString,
  lanes,
  planOrderError,
  reached,
  targeted,
  type PlanEntry,
} from '../../api/drain-plan.js';

const sel = (app: string) => ({ matchLabels: { app } });
const D = (p: number, app?: string): PlanEntry => (app ? { podType: 'Default', podPriority: p, podSelector: sel(app) } : { podType: 'Default', podPriority: p });
const DS = (p: number): PlanEntry => ({ podType: 'DaemonSet', podPriority: p });
const S = (p: number): PlanEntry => ({ podType: 'Static', podPriority: p });
const str = (es: readonly PlanEntry[]) => es.map(entryString);

describe('effective plan (NM-1.5)', () => {
  test('NM-1.5 [D≤5000, D≤15000, DS≤3000] gains every default entry it lacks, sorted by key', () => {
    expect(str(effectivePlan([D(5000), D(15000), DS(3000)]))).toEqual(
      str([D(5000), D(15000), D(1e9), D(2e9), D(2000001000), D(MAX_PRIORITY), DS(3000), DS(1e9), DS(2e9), DS(2000001000), DS(MAX_PRIORITY), S(1e9), S(2e9), S(2000001000), S(MAX_PRIORITY)]),
    );
  });
  test('NM-1.5 each entry appears once: a written default entry is not added again', () => {
    const p = effectivePlan([D(1e9), S(MAX_PRIORITY)]);
    expect(p).toHaveLength(12);
    expect(str(p)).toEqual(str(DEFAULT_DRAIN_PLAN));
  });
  test('NM-1.5 no plan gives the 12 defaults; the written plan is not changed', () => {
    expect(str(effectivePlan(undefined))).toEqual(str(DEFAULT_DRAIN_PLAN));
    const written = [D(2000, 'postgres'), D(1000)];
    effectivePlan(written);
    expect(str(written)).toEqual(['Default ≤ 2000 app=postgres', 'Default ≤ 1000']);
  });
  test('NM-1.5 selector entries keep their written order at equal key, and come before the entry without one', () => {
    expect(str(effectivePlan([D(1000, 'b'), D(1000, 'a'), D(1000)])).slice(0, 3)).toEqual(['Default ≤ 1000 app=b', 'Default ≤ 1000 app=a', 'Default ≤ 1000']);
  });
});

describe('plan order (NM-4.4, NM-4.5)', () => {
  const ORDER = 'entries must be ordered Default, DaemonSet, Static, then by podPriority ascending, with podSelector entries before the entry without one at equal priority';
  test('NM-4.4 a DaemonSet entry before a Default entry is refused, naming the later index', () => {
    expect(planOrderError([D(10), DS(10), D(20)])).toBe(`spec.drainPlan[2]: ${ORDER}`);
  });
  test('NM-4.4 D≤2000 before D≤1000 is refused', () => {
    expect(planOrderError([D(2000), D(1000)])).toBe(`spec.drainPlan[1]: ${ORDER}`);
  });
  test('NM-4.4 {D≤1000} before {D≤1000, app=x} is refused', () => {
    expect(planOrderError([D(1000), D(1000, 'x')])).toBe(`spec.drainPlan[1]: ${ORDER}`);
    expect(planOrderError([D(1000, 'x'), D(1000)])).toBeUndefined();
  });
  test('NM-4.4 two different selectors at the same type and priority are allowed, in either order', () => {
    expect(planOrderError([D(1000, 'x'), D(1000, 'y'), D(1000)])).toBeUndefined();
    expect(planOrderError([D(1000, 'y'), D(1000, 'x')])).toBeUndefined();
  });
  test('NM-4.4 Static before DaemonSet is refused; the default plan is in order', () => {
    expect(planOrderError([S(1), DS(1)])).toBe(`spec.drainPlan[1]: ${ORDER}`);
    expect(planOrderError(DEFAULT_DRAIN_PLAN)).toBeUndefined();
  });
  test('NM-4.5 duplicate entries are refused', () => {
    expect(planOrderError([D(1000, 'x'), D(1000, 'x')])).toBe('spec.drainPlan[1]: Duplicate entries are not allowed');
    expect(planOrderError([D(1000), D(1000)])).toBe('spec.drainPlan[1]: Duplicate entries are not allowed');
  });
  test('key order: type rank, then priority, then selector entries first', () => {
    expect(compareEntries(D(MAX_PRIORITY), DS(0))).toBeLessThan(0);
    expect(compareEntries(D(1), D(2, 'x'))).toBeLessThan(0);
    expect(compareEntries(D(2, 'x'), D(2))).toBeLessThan(0);
    expect(compareEntries(D(2, 'x'), D(2, 'y'))).toBe(0);
    expect(compareEntries(D(2, 'x'), D(2, 'y'), true)).toBeLessThan(0);
  });
});

describe('lanes and reached (§Terms)', () => {
  const e1 = effectivePlan([D(1000), D(2000, 'postgres'), D(MAX_PRIORITY), DS(1000), DS(MAX_PRIORITY), S(MAX_PRIORITY)]);
  test('E1 step 1: lanes({D≤1000}) with the plan\'s selectors is [D≤1000, D≤1000 app=postgres]', () => {
    expect(lanes([D(1000)], e1)).toEqual([D(1000), D(1000, 'postgres')]);
  });
  test('E1 step 2: with D≤2000 app=postgres reached, the selector lane rises and the other stays', () => {
    expect(lanes([D(1000), D(2000, 'postgres')], e1)).toEqual([D(1000), D(2000, 'postgres')]);
  });
  test('E1 final: [D≤MAX, D≤MAX app=postgres, DS≤MAX, S≤MAX]', () => {
    expect(lanes(e1, e1)).toEqual([D(MAX_PRIORITY), D(MAX_PRIORITY, 'postgres'), DS(MAX_PRIORITY), S(MAX_PRIORITY)]);
  });
  test('a selector of another type makes no lane; a type with only selector entries has no selector-less lane', () => {
    expect(lanes([D(5, 'x')], [DS(1)])).toEqual([D(5, 'x')]);
    expect(lanes([DS(7)], [D(5, 'x')])).toEqual([DS(7)]);
  });
  test('lanes target exactly the pods the reached entries match', () => {
    const R = [D(1000), D(2000, 'postgres'), D(3000, 'redis')];
    const T = lanes(R, [D(9, 'other')]);
    for (const priority of [0, 1000, 1500, 2500, 3500]) {
      for (const app of ['postgres', 'redis', 'other', 'web']) {
        const pod = { podType: 'Default' as const, priority, labels: { app } };
        expect([priority, app, targeted(T, pod)]).toEqual([priority, app, R.some((e) => entryMatches(e, pod))]);
      }
    }
  });
  test('reached: a lane of the same type with selector none or equal and priority ≥, or any lane of a higher type', () => {
    const T = [D(1000), D(2000, 'postgres')];
    expect(reached(T, D(1000))).toBe(true);
    expect(reached(T, D(1001))).toBe(false);
    expect(reached(T, D(2000, 'postgres'))).toBe(true);
    expect(reached(T, D(1000, 'redis'))).toBe(true);
    expect(reached(T, D(1500, 'redis'))).toBe(false);
    expect(reached(T, DS(0))).toBe(false);
    expect(reached([DS(0)], D(MAX_PRIORITY, 'x'))).toBe(true);
    expect(reached([], D(0))).toBe(false);
  });
  test('a pod matches an entry by type, priority ≤ and selector', () => {
    const pod = { podType: 'Default' as const, priority: 1500, labels: { app: 'postgres' } };
    expect(entryMatches(D(2000, 'postgres'), pod)).toBe(true);
    expect(entryMatches(D(1500), pod)).toBe(true);
    expect(entryMatches(D(1499), pod)).toBe(false);
    expect(entryMatches(D(2000, 'redis'), pod)).toBe(false);
    expect(entryMatches(DS(MAX_PRIORITY), pod)).toBe(false);
  });
});
