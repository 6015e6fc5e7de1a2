// NodeDisruptionBudget: the spec's validation (zod side; the CRD side is checked against the
// apiserver in test/integration/disruption-budget.test.ts), the arithmetic (percentages round up as
// Karpenter's budgets do), cron windows in UTC, and the admission decision over the ledger.
import { issueMessages } from '../../api/admission.js';
import { NodeDisruptionBudgetSpec, type LedgerEntry, type NodeDisruptionBudgetSpecInput } from '../../api/node-disruption-budget.js';
import { admit, lastFiring, limitInForce, parseCron, scaledLimit, type BudgetView, type NodeLabels } from '../../shared/disruption-budget.js';

const spec = (s: Partial<NodeDisruptionBudgetSpecInput> = {}) => NodeDisruptionBudgetSpec.parse({ maxDisrupted: 2, ...s });
const refusal = (s: unknown) => {
  const r = NodeDisruptionBudgetSpec.safeParse(s);
  return r.success ? [] : issueMessages(r.error);
};
const at = (iso: string) => Date.parse(iso);

describe('NodeDisruptionBudget spec (zod)', () => {
  test('accepts a count, digits and a percentage, windows and perZone, and defaults the zone key', () => {
    const s = spec({ maxDisrupted: '10%', schedules: [{ schedule: '0 9 * * MON-fri', duration: '8h', maxDisrupted: 0 }], perZone: { maxDisrupted: '1' } });
    expect(s.perZone?.topologyKey).toBe('topology.kubernetes.io/zone');
    expect(refusal({ maxDisrupted: '3' })).toEqual([]);
    expect(refusal({ maxDisrupted: 0, schedules: [{ schedule: '@daily', duration: '1h', maxDisrupted: '100%' }] })).toEqual([]);
  });

  test.each([
    [{ maxDisrupted: -1 }, 'spec.maxDisrupted: -1: maxDisrupted must be a number of nodes from 0 to 100000 or a percentage'],
    [{ maxDisrupted: '101%' }, 'spec.maxDisrupted: "101%": maxDisrupted must be'],
    [{ maxDisrupted: '10.5%' }, 'spec.maxDisrupted: "10.5%": maxDisrupted must be'],
    [{ maxDisrupted: 1.5 }, 'spec.maxDisrupted: 1.5: maxDisrupted must be'],
    [{}, 'spec.maxDisrupted: Required value'],
    [{ maxDisrupted: 1, schedules: [{ schedule: '61 * * * *', duration: '1h', maxDisrupted: 0 }] }, 'spec.schedules[0].schedule: "61 * * * *" is not a 5-field cron schedule'],
    [{ maxDisrupted: 1, schedules: [{ schedule: '0 9 * *', duration: '1h', maxDisrupted: 0 }] }, 'spec.schedules[0].schedule: "0 9 * *" is not a 5-field cron schedule'],
    [{ maxDisrupted: 1, schedules: [{ schedule: '0 17-9 * * *', duration: '1h', maxDisrupted: 0 }] }, 'spec.schedules[0].schedule: "0 17-9 * * *": range 17-9 goes backwards'],
    [{ maxDisrupted: 1, schedules: [{ schedule: '*/0 * * * *', duration: '1h', maxDisrupted: 0 }] }, 'step /0 must be at least 1'],
    [{ maxDisrupted: 1, schedules: [{ schedule: '0 9 * * *', duration: '2d', maxDisrupted: 0 }] }, 'spec.schedules[0].duration: "2d" is not a duration'],
    [{ maxDisrupted: 1, schedules: [{ schedule: '0 9 * * *', duration: '30s', maxDisrupted: 0 }] }, 'spec.schedules[0].duration: "30s" must be a duration between 1m and 8760h'],
    [{ maxDisrupted: 1, schedules: [{ schedule: '0 9 * * *', duration: '1h', maxDisrupted: '0' }, { schedule: '0 9 * * *', duration: '2h', maxDisrupted: 1 }] }, 'spec.schedules[1].schedule: two windows have the same schedule'],
    [{ maxDisrupted: 1, perZone: { topologyKey: 'bad key', maxDisrupted: 1 } }, 'spec.perZone.topologyKey: label key "bad key" is not valid'],
    [{ maxDisrupted: 1, nodeSelector: { matchLabels: { 'a b': 'x' } } }, 'spec.nodeSelector.matchLabels[a b]: label key "a b" is not valid'],
  ])('refuses %j naming the field', (s, message) => {
    const errors = refusal(s);
    expect([errors.find((e) => e.includes(message)), errors]).toEqual([expect.any(String), errors]);
  });
});

describe('percentages round up (Karpenter: GetScaledValueFromIntOrPercent with roundUp=true)', () => {
  test.each([
    ['10%', 5, 1],
    ['10%', 10, 1],
    ['10%', 11, 2],
    ['33%', 3, 1],
    ['50%', 3, 2],
    ['100%', 7, 7],
    ['0%', 100, 0],
    ['10%', 0, 0],
    [3, 100, 3],
    ['3', 1, 3],
  ] as const)('%s of %d nodes is %d', (max, total, want) => expect(scaledLimit(max, total)).toBe(want));
});

describe('cron windows (UTC)', () => {
  test('a window is in force from the firing for its duration, then not', () => {
    const c = parseCron('0 9 * * mon-fri');
    const twoHours = 2 * 3600_000;
    expect(lastFiring(c, at('2026-11-25T08:59:00Z'), twoHours)).toBeUndefined(); // Wednesday, before
    expect(lastFiring(c, at('2026-11-25T09:00:00Z'), twoHours)).toBe(at('2026-11-25T09:00:00Z'));
    expect(lastFiring(c, at('2026-11-25T10:59:59Z'), twoHours)).toBe(at('2026-11-25T09:00:00Z'));
    expect(lastFiring(c, at('2026-11-25T11:00:00Z'), twoHours)).toBeUndefined(); // the window has ended
    expect(lastFiring(c, at('2026-11-28T09:30:00Z'), twoHours)).toBeUndefined(); // Saturday
  });

  test('day-of-month and day-of-week both restricted: either matches (robfig/cron, vixie cron)', () => {
    const c = parseCron('0 0 1 * sun');
    expect(lastFiring(c, at('2026-11-01T00:30:00Z'), 3600_000)).toBeDefined(); // the 1st (a Sunday too)
    expect(lastFiring(c, at('2026-12-01T00:30:00Z'), 3600_000)).toBeDefined(); // the 1st, a Tuesday
    expect(lastFiring(c, at('2026-11-29T00:30:00Z'), 3600_000)).toBeDefined(); // a Sunday, the 29th
    expect(lastFiring(c, at('2026-11-30T00:30:00Z'), 3600_000)).toBeUndefined();
  });

  test('steps, lists, 7 as Sunday, macros, a window longer than a day', () => {
    expect(lastFiring(parseCron('*/15 * * * *'), at('2026-11-25T10:44:00Z'), 60_000)).toBeUndefined();
    expect(lastFiring(parseCron('*/15 * * * *'), at('2026-11-25T10:45:30Z'), 60_000)).toBe(at('2026-11-25T10:45:00Z'));
    expect(lastFiring(parseCron('5,35 * * * *'), at('2026-11-25T10:36:00Z'), 120_000)).toBe(at('2026-11-25T10:35:00Z'));
    expect(lastFiring(parseCron('0 0 * * 7'), at('2026-11-29T05:00:00Z'), 6 * 3600_000)).toBe(at('2026-11-29T00:00:00Z'));
    expect(lastFiring(parseCron('@weekly'), at('2026-12-01T12:00:00Z'), 72 * 3600_000)).toBe(at('2026-11-29T00:00:00Z'));
    expect(lastFiring(parseCron('0 0 1 1 *'), at('2026-11-25T00:00:00Z'), 8760 * 3600_000)).toBe(at('2026-01-01T00:00:00Z'));
  });

  test('the limit in force: the base, or the lowest window in force, saying which', () => {
    const s = spec({
      maxDisrupted: '50%',
      schedules: [
        { schedule: '0 9 * * *', duration: '8h', maxDisrupted: 1 },
        { schedule: '0 12 * * *', duration: '1h', maxDisrupted: 0 },
      ],
    });
    expect(limitInForce(s, 10, at('2026-11-25T08:00:00Z'))).toEqual({ nodes: 5, reason: 'maxDisrupted 50%' });
    expect(limitInForce(s, 10, at('2026-11-25T10:00:00Z'))).toEqual({ nodes: 1, reason: 'window "0 9 * * *" for 8h (until 2026-11-25T17:00Z): maxDisrupted 1', window: 0 });
    expect(limitInForce(s, 10, at('2026-11-25T12:30:00Z'))).toMatchObject({ nodes: 0, window: 1 });
  });
});

describe('the admission decision', () => {
  const nodes: NodeLabels[] = ['a1', 'a2', 'a3', 'b1', 'b2', 'b3'].map((name) => ({ name, labels: { pool: 'w', 'topology.kubernetes.io/zone': name[0]! } }));
  const e = (node: string, holder: string, since = '2026-11-25T10:00:00Z'): LedgerEntry => ({ node, holder, since });
  const view = (s: Partial<NodeDisruptionBudgetSpecInput>, disrupted: LedgerEntry[] = [], waiting: LedgerEntry[] = []): BudgetView => ({
    name: 'workers',
    spec: spec({ nodeSelector: { matchLabels: { pool: 'w' } }, ...s }),
    disrupted,
    waiting,
  });
  const now = at('2026-11-25T10:00:00Z');

  test('room under the limit admits; a full budget refuses in the words the status shows', () => {
    expect(admit(view({ maxDisrupted: 2 }, [e('a1', 'x')]), nodes, 'y', 'a2', now)).toEqual({ ok: true });
    expect(admit(view({ maxDisrupted: 2 }, [e('a1', 'x'), e('a2', 'x')]), nodes, 'y', 'b1', now)).toEqual({
      ok: false,
      reason: 'waiting for NodeDisruptionBudget workers: 2 of 2 nodes disrupted',
    });
  });

  test('a node already disrupted costs no slot (two holders, one node), and a node counts once', () => {
    const full = view({ maxDisrupted: 1 }, [e('a1', 'x'), e('a1', 'y')]);
    expect(admit(full, nodes, 'z', 'a1', now)).toEqual({ ok: true });
    expect(admit(full, nodes, 'z', 'a2', now)).toMatchObject({ ok: false, reason: expect.stringContaining('1 of 1 nodes disrupted') });
  });

  test('a selected node cordoned or being deleted outside the ledger counts too (from cordon to uncordon or deletion, whoever cordoned it); an unselected one does not', () => {
    const cordoned = nodes.map((n) => (n.name === 'b3' ? { ...n, disrupted: true } : n));
    expect(admit(view({ maxDisrupted: 2 }, [e('a1', 'x')]), cordoned, 'y', 'a2', now)).toEqual({
      ok: false,
      reason: 'waiting for NodeDisruptionBudget workers: 2 of 2 nodes disrupted (1 cordoned or deleting outside the ledger)',
    });
    // Taking the cordoned node itself costs no new slot.
    expect(admit(view({ maxDisrupted: 2 }, [e('a1', 'x')]), cordoned, 'y', 'b3', now)).toEqual({ ok: true });
    // perZone sees it in its zone.
    expect(admit(view({ maxDisrupted: 4, perZone: { maxDisrupted: 1 } }), cordoned, 'y', 'b1', now)).toMatchObject({ ok: false, reason: expect.stringContaining('1 of 1 nodes disrupted in topology.kubernetes.io/zone=b') });
    const other = [...nodes, { name: 'c1', labels: { pool: 'other' }, disrupted: true }];
    expect(admit(view({ maxDisrupted: 2 }, [e('a1', 'x')]), other, 'y', 'a2', now)).toEqual({ ok: true });
  });

  test('first come, first served: a later waiter does not pass an earlier one for the last slot', () => {
    const b = view({ maxDisrupted: 2 }, [e('a1', 'x')], [e('a2', 'first'), e('b1', 'second')]);
    expect(admit(b, nodes, 'first', 'a2', now)).toEqual({ ok: true });
    expect(admit(b, nodes, 'second', 'b1', now)).toEqual({ ok: false, reason: 'waiting for NodeDisruptionBudget workers: 1 of 2 nodes disrupted, 1 waiting ahead' });
    // a newcomer not yet in the queue counts everyone waiting as ahead
    expect(admit(b, nodes, 'third', 'b2', now)).toMatchObject({ ok: false });
  });

  test('a percentage of the selected nodes, rounded up', () => {
    expect(admit(view({ maxDisrupted: '10%' }), nodes, 'x', 'a1', now)).toEqual({ ok: true }); // ceil(0.6) = 1
    expect(admit(view({ maxDisrupted: '10%' }, [e('a1', 'x')]), nodes, 'y', 'a2', now)).toMatchObject({ ok: false, reason: expect.stringContaining('1 of 1 nodes') });
  });

  test('a freeze window in force refuses, naming the window', () => {
    const b = view({ maxDisrupted: 3, schedules: [{ schedule: '0 10 * * *', duration: '1h', maxDisrupted: 0 }] });
    expect(admit(b, nodes, 'x', 'a1', now)).toEqual({
      ok: false,
      reason: 'waiting for NodeDisruptionBudget workers: 0 of 0 nodes disrupted (window "0 10 * * *" for 1h (until 2026-11-25T11:00Z): maxDisrupted 0)',
    });
    expect(admit(b, nodes, 'x', 'a1', at('2026-11-25T11:00:00Z'))).toEqual({ ok: true });
    // A base limit of 0 says so too.
    expect(admit(view({ maxDisrupted: 0 }), nodes, 'x', 'a1', now)).toEqual({ ok: false, reason: 'waiting for NodeDisruptionBudget workers: 0 of 0 nodes disrupted (maxDisrupted 0)' });
  });

  test('perZone: the zone must have room too', () => {
    const b = view({ maxDisrupted: 4, perZone: { maxDisrupted: 1 } }, [e('a1', 'x')]);
    expect(admit(b, nodes, 'y', 'a2', now)).toEqual({ ok: false, reason: 'waiting for NodeDisruptionBudget workers: 1 of 1 nodes disrupted in topology.kubernetes.io/zone=a' });
    expect(admit(b, nodes, 'y', 'b1', now)).toEqual({ ok: true });
  });

  test('an invalid budget admits nothing it selects (fails closed), saying why', () => {
    const b: BudgetView = { name: 'broken', invalid: 'spec.schedules[0].schedule: range 17-9 goes backwards', selector: { matchLabels: { pool: 'w' } }, disrupted: [], waiting: [] };
    expect(admit(b, nodes, 'x', 'a1', now)).toEqual({ ok: false, reason: expect.stringContaining('NodeDisruptionBudget broken: it is invalid (spec.schedules[0].schedule: range 17-9 goes backwards)') });
  });
});
