// The node side of the planner (workflows/maintenance/targets.ts): L(N), A2, A4, A5, A6, final, messages.
import { MAX_PRIORITY, effectivePlan, type PlanEntry } from '../../api/drain-plan.js';
import {
  fastForwardMessage,
  fastForwardedBy,
  limitedBy,
  limiting,
  nodeLevelMessage,
  nodeMessage,
  updateTargets,
  type Holder,
  type NodeMessageFacts,
} from '../../workflows/maintenance/targets.js';

const D = (p: number, app?: string): PlanEntry => (app ? { podType: 'Default', podPriority: p, podSelector: { matchLabels: { app } } } : { podType: 'Default', podPriority: p });
const DS = (p: number): PlanEntry => ({ podType: 'DaemonSet', podPriority: p });
const S = (p: number): PlanEntry => ({ podType: 'Static', podPriority: p });

let seq = 0;
function holder(name: string, plan: PlanEntry[], index = 0, extra: Partial<Holder> = {}): Holder {
  seq++;
  return { id: `nm/${name}/uid`, name, createdAt: `2026-01-01T00:00:${String(seq).padStart(2, '0')}Z`, stage: 'Drain', plan: effectivePlan(plan), index, ...extra };
}

describe('L(N), the limiting maintenance', () => {
  test('L(N) is the covering holder with the least frontier', () => {
    const a = holder('a', [D(5000)]);
    const b = holder('b', [D(10000)]);
    expect(limiting([b, a])?.name).toBe('a');
  });
  test('L(N) ties: older creationTimestamp wins, then name', () => {
    const a = holder('a', [D(15000)], 0, { createdAt: '2026-01-01T00:00:05Z' });
    const b = holder('b', [D(15000)], 0, { createdAt: '2026-01-01T00:00:01Z' });
    expect(limiting([a, b])?.name).toBe('b');
    const c = holder('c', [D(15000)], 0, { createdAt: '2026-01-01T00:00:01Z' });
    expect(limiting([c, b])?.name).toBe('b');
  });
  test('L(N) ties of different selectors at one key: the canonical selector JSON decides, before age', () => {
    const y = holder('y', [D(2000, 'y')], 0, { createdAt: '2026-01-01T00:00:00Z' });
    const x = holder('x', [D(2000, 'x')], 0, { createdAt: '2026-01-02T00:00:00Z' });
    expect(limiting([y, x])?.name).toBe('x');
  });
  test('A6 Cordon-stage holders never limit', () => {
    const a = holder('a', [D(100)], 0, { stage: 'Cordon' });
    const b = holder('b', [D(10000)]);
    expect(limiting([a, b])?.name).toBe('b');
    expect(limiting([a])).toBeUndefined();
  });
  test('a holder past its last entry has its last entry as frontier', () => {
    const done = holder('done', [], 12);
    const b = holder('b', [DS(5)], 7);
    expect(limiting([done, b])?.name).toBe('b');
    expect(limiting([done])?.name).toBe('done');
  });
});

describe('updateTargets (A2, A4, A5, A6)', () => {
  test('A2 T(N) = lanes(R ∪ prefix(L)) with the selectors of every covering plan', () => {
    const a = holder('a', [D(5000)]);
    const b = holder('b', [D(10000), D(20000, 'pg')]);
    const u = updateTargets(undefined, [a, b]);
    expect(u.state.lanes).toEqual([D(5000), D(5000, 'pg')]);
    expect(u.changed).toBe(true);
    expect(u.final).toBe(false);
    expect(updateTargets(u.state, [a, b]).changed).toBe(false);
  });
  test('A2/A4 earlier targets stay when L(N) changes to a lower frontier', () => {
    const b = holder('b', [D(10000)]);
    const first = updateTargets(undefined, [b]);
    const c = holder('c', [D(2000)]);
    const u = updateTargets(first.state, [b, c]);
    expect(u.state.lanes).toEqual([D(10000)]);
    expect(u.changed).toBe(false);
  });
  test('A4 a selector lane stays when the holder whose plan named the selector leaves', () => {
    const a = holder('a', [D(500), D(3000, 'x')]);
    const b = holder('b', []);
    const first = updateTargets(undefined, [a]);
    expect(first.state.lanes).toEqual([D(500), D(500, 'x')]);
    const u = updateTargets(first.state, [b]);
    expect(u.state.lanes).toEqual([D(1e9), D(1e9, 'x')]);
  });
  test('A4 with no covering holder R(N) is cleared and a later maintenance starts from nothing', () => {
    const b = holder('b', [D(10000)]);
    const first = updateTargets(undefined, [b]);
    const cordonOnly = updateTargets(first.state, [holder('m1', [], 0, { stage: 'Cordon' })]);
    expect(cordonOnly.state.lanes).toEqual([]);
    expect(cordonOnly.state.reached).toEqual([]);
    expect(cordonOnly.changed).toBe(true);
    const c = holder('c', [D(2000)]);
    const later = updateTargets(cordonOnly.state, [c]);
    expect(later.state.lanes).toEqual([D(2000)]);
    expect(later.fastForwarded).toEqual([]);
  });
  test('A6 a Cordon-stage holder neither advances nor limits targets', () => {
    const a = holder('a', [D(5000)]);
    const u = updateTargets(undefined, [a, holder('m1', [D(1)], 0, { stage: 'Cordon' })]);
    expect(u.state.lanes).toEqual([D(5000)]);
  });
  test('A5 a holder that starts to cover N below T(N) is fast-forwarded once, named with who set the lanes, until it catches up', () => {
    const b = holder('maintenance-b', [D(10000), D(15000)]);
    const first = updateTargets(undefined, [b]);
    const c = holder('maintenance-c', [D(2000), D(15000)]);
    const u = updateTargets(first.state, [b, c]);
    expect(u.fastForwarded).toEqual([{ holder: c.id, lanes: [D(10000)], setBy: ['maintenance-b'] }]);
    expect(fastForwardMessage('one', u.fastForwarded[0]!, c)).toBe(
      'node one: drain targets [Default ≤ 10000] set by older maintenance-b are kept; this plan starts at Default ≤ 2000',
    );
    expect(fastForwardedBy(u.state, c.id)).toEqual(['maintenance-b']);
    expect(fastForwardedBy(u.state, b.id)).toEqual([]);
    // The Event is once: the next evaluation reports no newcomer, the message still says so.
    const again = updateTargets(u.state, [b, c]);
    expect(again.fastForwarded).toEqual([]);
    expect(fastForwardedBy(again.state, c.id)).toEqual(['maintenance-b']);
    // Both advance to D≤15000: c's prefix now reaches T(N).
    const caught = updateTargets(again.state, [{ ...b, index: 1 }, { ...c, index: 1 }]);
    expect(caught.state.lanes).toEqual([D(15000)]);
    expect(fastForwardedBy(caught.state, c.id)).toEqual([]);
  });
  test('A5 a holder whose prefix reaches T(N) when it starts to cover is not fast-forwarded', () => {
    const a = holder('a', [D(5000)]);
    const first = updateTargets(undefined, [a]);
    const b = holder('b', [D(10000)]);
    expect(updateTargets(first.state, [a, b]).fastForwarded).toEqual([]);
  });
  test('A5 a holder moving from Cordon to Drain starts to cover then', () => {
    const b = holder('b', [D(10000)]);
    const c = holder('c', [D(2000)], 0, { stage: 'Cordon' });
    const first = updateTargets(undefined, [b, c]);
    expect(first.fastForwarded).toEqual([]);
    const u = updateTargets(first.state, [b, { ...c, stage: 'Drain' }]);
    expect(u.fastForwarded.map((f) => f.holder)).toEqual([c.id]);
  });
  test('final: once every covering holder is past its last entry or T(N) reaches all its entries', () => {
    const plan = effectivePlan([]);
    const a = holder('a', [], plan.length - 1);
    const u = updateTargets(undefined, [a]);
    expect(u.final).toBe(true);
    expect(u.state.lanes).toEqual([D(MAX_PRIORITY), DS(MAX_PRIORITY), S(MAX_PRIORITY)]);
    // A second covering holder still at its first entry: T(N) reaches all its entries too.
    const b = holder('b', [D(10)]);
    expect(updateTargets(u.state, [a, b]).final).toBe(true);
    // Not final while a holder has entries ahead that T does not reach.
    expect(updateTargets(undefined, [holder('c', [D(10)])]).final).toBe(false);
    // A flip of final alone is a change (the drain needs it to start its volume wait).
    const before = updateTargets(undefined, [holder('d', [], plan.length - 2)]);
    expect(before.final).toBe(false);
    const after = updateTargets(before.state, [holder('d', [], plan.length)]);
    expect(after.final).toBe(true);
    expect(after.changed).toBe(true);
  });
});

describe('limitedBy', () => {
  test('names L(N) when T(N) does not reach M\'s entry; none when M is L, at the same entry, Cordon-only or past its last entry', () => {
    const a = holder('a', [D(5000), D(15000)], 1);
    const b = holder('b', [D(10000), D(15000)]);
    expect(limitedBy([a, b], a.id, [D(10000)])).toEqual(['b']);
    expect(limitedBy([a, b], b.id, [D(10000)])).toEqual([]);
    expect(limitedBy([a, { ...b, index: 1 }], b.id, [D(15000)])).toEqual([]);
    expect(limitedBy([a, { ...b, stage: 'Cordon' }], a.id, [D(10000)])).toEqual([]);
    expect(limitedBy([{ ...a, index: a.plan.length }, b], a.id, [D(10000)])).toEqual([]);
  });
});

describe("M's drainMessage for node N (spec §3 rules 1-7)", () => {
  const base: NodeMessageFacts = { maintenance: 'a', finished: false, reachedEntry: true };
  test('rule order: gone, claimed, drained, fast-forwarded, limited, draining', () => {
    const all: NodeMessageFacts = { ...base, gone: true, claimedBy: 'ns/cnr', drained: true, fastForwardedBy: ['b'], limiting: 'b' };
    expect(nodeMessage(all)).toBe('Node no longer exists');
    expect(nodeMessage({ ...all, gone: false })).toBe('Cycled by CycleNodeRequest ns/cnr');
    expect(nodeMessage({ ...all, gone: false, claimedBy: undefined })).toBe('Drained');
    expect(nodeMessage({ ...all, gone: false, claimedBy: undefined, drained: false })).toBe('Draining (fast-forwarded by older b)');
    expect(nodeMessage({ ...base, limiting: 'b' })).toBe('Draining (limited by b)');
    expect(nodeMessage({ ...base, limiting: 'a' })).toBe('Draining');
    expect(nodeMessage(base)).toBe('Draining');
  });
  test('rule 7: once finished, "Waiting for X." when the entry is not reached, else the first other node not ready', () => {
    const fin = { ...base, finished: true };
    expect(nodeMessage({ ...fin, reachedEntry: false, limiting: 'maintenance-a' })).toBe('Waiting for maintenance-a.');
    expect(nodeMessage({ ...fin, waitingForNode: { name: 'two' } })).toBe('Waiting for node two.');
    expect(nodeMessage({ ...fin, waitingForNode: { name: 'one', limitedBy: 'maintenance-a' } })).toBe('Waiting for node one (maintenance-a).');
    expect(nodeMessage({ ...fin, waitingForNode: { name: 'one', limitedBy: 'a' } })).toBe('Waiting for node one.');
  });
  test('NM-6.3 the node-level message names L(N) whenever two or more maintenances cover N', () => {
    const a = holder('a', [D(5000)]);
    const b = holder('b', [D(10000)]);
    expect(nodeLevelMessage([a, b], false)).toBe('Draining (limited by a)');
    expect(nodeLevelMessage([a], false)).toBe('Draining');
    expect(nodeLevelMessage([a, b], true)).toBe('Drained');
  });
});
