// The spec's worked examples E1-E3 (§3) on the pure planner: the targets, messages and eviction order they state.
import { MAX_PRIORITY, type Lane, type PlanEntry } from '../../api/drain-plan.js';
import { Sim, type SimPod } from '../support/maintenance-sim.js';

const D = (p: number, app?: string): PlanEntry => (app ? { podType: 'Default', podPriority: p, podSelector: { matchLabels: { app } } } : { podType: 'Default', podPriority: p });
const DS = (p: number): PlanEntry => ({ podType: 'DaemonSet', podPriority: p });
const S = (p: number): PlanEntry => ({ podType: 'Static', podPriority: p });
const pod = (name: string, priority: number, extra: Partial<SimPod> = {}): SimPod => ({ name, podType: 'Default', priority, labels: {}, ...extra });
const evicted = (sim: Sim) => sim.evictions.map((e) => e.pod);
const nodeStatus = (sim: Sim, m: string, node: string) => sim.status(m).nodeStatuses.find((s) => s.name === node)!;
const targets = (sim: Sim, node: string): Lane[] => sim.lanes(node);

describe('E1: one maintenance, selector lane, kept daemons', () => {
  const make = () =>
    new Sim(
      {
        five: [
          pod('web', 0),
          pod('pg', 1500, { labels: { app: 'postgres' } }),
          pod('cache', 1500, { labels: { app: 'redis' } }),
          pod('coredns', 2000000000),
          pod('exporter', 0, { podType: 'DaemonSet', kept: true }),
          pod('etcd-five', 2000001000, { podType: 'Static', kept: true }),
        ],
      },
      [{ name: 'm', nodes: ['five'], drainAt: 0, plan: [D(1000), D(2000, 'postgres'), D(MAX_PRIORITY), DS(1000), DS(MAX_PRIORITY), S(MAX_PRIORITY)] }],
    );

  test('E1 T(five) walks [D≤1000, D≤1000 app=postgres] → [D≤1000, D≤2000 app=postgres] → [D≤1e9, D≤1e9 app=postgres], one pod at a time', () => {
    const sim = make();
    sim.plan();
    expect(targets(sim, 'five')).toEqual([D(1000), D(1000, 'postgres')]);
    sim.evict();
    expect(evicted(sim)).toEqual(['web']);
    sim.progress();
    sim.plan();
    expect(targets(sim, 'five')).toEqual([D(1000), D(2000, 'postgres')]);
    sim.evict();
    expect(evicted(sim)).toEqual(['web', 'pg']);
    sim.progress();
    sim.plan();
    expect(targets(sim, 'five')).toEqual([D(1e9), D(1e9, 'postgres')]);
    sim.evict();
    expect(evicted(sim)).toEqual(['web', 'pg', 'cache']);
  });

  test('E1 exactly 4 evictions in the order web < pg < cache < coredns, each in a later round; daemons are targeted but kept; final T is [D≤MAX, D≤MAX app=postgres, DS≤MAX, S≤MAX]', () => {
    const sim = make();
    let exporterTargeted = false;
    sim.onTargets = (n) => {
      if (n.state!.lanes.some((l) => l.podType === 'DaemonSet')) exporterTargeted = true;
    };
    sim.run(100);
    expect(sim.m('m').stage).toBe('Complete');
    expect(evicted(sim)).toEqual(['web', 'pg', 'cache', 'coredns']);
    const rounds = sim.evictions.map((e) => e.round);
    expect([...rounds].sort((a, b) => a - b)).toEqual(rounds);
    expect(new Set(rounds).size).toBe(4);
    expect(exporterTargeted).toBe(true);
    expect(sim.node('five').pods.map((p) => p.name)).toEqual(['exporter', 'etcd-five']);
    expect(targets(sim, 'five')).toEqual([D(MAX_PRIORITY), D(MAX_PRIORITY, 'postgres'), DS(MAX_PRIORITY), S(MAX_PRIORITY)]);
    expect(sim.node('five').state!.final).toBe(true);
  });

  test('E1 a drained node reads "Drained" for its maintenance', () => {
    const sim = make();
    // Stop just before completion: past the last entry, final and finished.
    while (sim.m('m').index < sim.m('m').plan.length) sim.step();
    expect(sim.status('m').nodeStatuses[0]!.drainMessage).toBe('Drained');
    expect(sim.status('m').drainMessage).toBe('Drained');
  });
});

describe('E2: two intersecting maintenances', () => {
  const make = () =>
    new Sim(
      {
        one: [pod('p1', 4000), pod('p2', 8000), pod('p3', 12000)],
        two: [pod('q1', 5000, { blockedUntil: Number.MAX_SAFE_INTEGER }), pod('q2', 14000)],
        three: [pod('r1', 9000), pod('r2', 11000)],
      },
      [
        { name: 'maintenance-a', nodes: ['one', 'two'], drainAt: 0, plan: [D(5000), D(15000), DS(3000)] },
        { name: 'maintenance-b', nodes: ['one', 'three'], drainAt: 0, plan: [D(10000), D(15000), DS(4000)] },
      ],
    );

  test('E2 t1: p1 and r1 go, q1 is refused, and the four node messages and reachedDrainTargets are as stated', () => {
    const sim = make();
    sim.step();
    expect(evicted(sim)).toEqual(['p1', 'r1']);
    expect(nodeStatus(sim, 'maintenance-a', 'one')).toMatchObject({ drainTargets: [D(5000)], drainMessage: 'Waiting for node two.' });
    expect(nodeStatus(sim, 'maintenance-a', 'two')).toMatchObject({ drainTargets: [D(5000)], drainMessage: 'Draining' });
    expect(nodeStatus(sim, 'maintenance-b', 'one')).toMatchObject({ drainTargets: [D(5000)], drainMessage: 'Waiting for maintenance-a.', limitedBy: ['maintenance-a'] });
    expect(nodeStatus(sim, 'maintenance-b', 'three')).toMatchObject({ drainTargets: [D(10000)], drainMessage: 'Waiting for node one (maintenance-a).', limitedBy: [] });
    expect(sim.status('maintenance-a').reachedDrainTargets).toEqual([D(5000)]);
    expect(sim.status('maintenance-b').reachedDrainTargets).toEqual([D(5000)]);
    expect(sim.status('maintenance-b').drainMessage).toBe('Waiting for maintenance-a.');
    // Held: r2 is not evicted while q1 exists.
    for (let i = 0; i < 30; i++) sim.step();
    expect(evicted(sim)).toEqual(['p1', 'r1']);
    expect(sim.m('maintenance-a').index).toBe(0);
    expect(sim.m('maintenance-b').index).toBe(0);
  });

  test('E2 after the PDB is relaxed: a advances, one is limited by b, p2 and q2 go; then b advances, L(one) is the older a, p3 and r2 go; both end Drained at [D≤MAX, DS≤MAX, S≤MAX]', () => {
    const sim = make();
    sim.step();
    sim.node('two').pods.find((p) => p.name === 'q1')!.blockedUntil = 0;
    sim.step(); // q1 leaves, a advances to D≤15000
    expect(evicted(sim)).toEqual(['p1', 'r1', 'q1']);
    expect(sim.m('maintenance-a').index).toBe(1);
    sim.plan();
    expect(targets(sim, 'one')).toEqual([D(10000)]);
    expect(targets(sim, 'two')).toEqual([D(15000)]);
    expect(nodeStatus(sim, 'maintenance-a', 'one')).toMatchObject({ drainMessage: 'Draining (limited by maintenance-b)', limitedBy: ['maintenance-b'] });
    expect(sim.status('maintenance-a').drainMessage).toBe('Draining (limited by maintenance-b)');
    sim.evict();
    expect(evicted(sim).slice(3).sort()).toEqual(['p2', 'q2']);
    sim.progress(); // p2 gone: b advances
    expect(sim.m('maintenance-b').index).toBe(1);
    sim.plan();
    expect(targets(sim, 'one')).toEqual([D(15000)]);
    expect(targets(sim, 'three')).toEqual([D(15000)]);
    // Equal frontiers: a (older) is L(one), and neither limits the other.
    expect(nodeStatus(sim, 'maintenance-b', 'one').limitedBy).toEqual([]);
    sim.evict();
    expect(evicted(sim).slice(5).sort()).toEqual(['p3', 'r2']);
    sim.progress();
    sim.run(100);
    expect(sim.ms.map((m) => m.stage)).toEqual(['Complete', 'Complete']);
    for (const n of ['one', 'two', 'three']) expect(targets(sim, n)).toEqual([D(MAX_PRIORITY), DS(MAX_PRIORITY), S(MAX_PRIORITY)]);
    // Audit order: p2 and q2 after q1's deletion, p3 and r2 after p2's.
    const at = (p: string) => sim.evictions.find((e) => e.pod === p)!.round;
    expect(Math.min(at('p2'), at('q2'))).toBeGreaterThan(at('q1'));
    expect(Math.min(at('p3'), at('r2'))).toBeGreaterThan(at('p2'));
  });
});

describe('E3: fast-forward and late pods', () => {
  const make = () =>
    new Sim(
      {
        one: [pod('p1', 4000), pod('p2', 8000, { blockedUntil: Number.MAX_SAFE_INTEGER }), pod('p3', 12000)],
        four: [pod('s1', 1500), pod('s2', 3000)],
      },
      [
        { name: 'maintenance-b', nodes: ['one'], drainAt: 0, plan: [D(10000), D(15000)] },
        { name: 'maintenance-c', nodes: ['one', 'four'], drainAt: 2, plan: [D(2000), D(15000)] },
      ],
    );

  test('E3 c joins one at D≤2000: T(one) stays [D≤10000], c is fast-forwarded with an Event naming b, four gets [D≤2000]', () => {
    const sim = make();
    sim.step();
    sim.step();
    expect(targets(sim, 'one')).toEqual([D(10000)]);
    expect(evicted(sim)).toEqual(['p1']);
    sim.plan(); // c enters Drain
    expect(targets(sim, 'one')).toEqual([D(10000)]);
    expect(targets(sim, 'four')).toEqual([D(2000)]);
    expect(sim.fastForwards.map((f) => [f.node, f.maintenance, f.message])).toEqual([
      ['one', 'maintenance-c', 'node one: drain targets [Default ≤ 10000] set by older maintenance-b are kept; this plan starts at Default ≤ 2000'],
    ]);
    expect(nodeStatus(sim, 'maintenance-c', 'one').drainMessage).toBe('Draining (fast-forwarded by older maintenance-b)');
    sim.evict();
    expect(evicted(sim)).toEqual(['p1', 's1']);
    expect(sim.status('maintenance-c').reachedDrainTargets).toEqual([D(2000)]);
    sim.progress();
    for (let i = 0; i < 30; i++) sim.step();
    expect(evicted(sim)).toEqual(['p1', 's1']);
    expect(sim.fastForwards).toHaveLength(1);
  });

  test('E3 when p2 leaves both advance: T(one) = T(four) = [D≤15000], p3 and s2 go, and c is no longer fast-forwarded', () => {
    const sim = make();
    for (let i = 0; i < 4; i++) sim.step();
    sim.node('one').pods.find((p) => p.name === 'p2')!.blockedUntil = 0;
    sim.step();
    expect(sim.m('maintenance-b').index).toBe(1);
    expect(sim.m('maintenance-c').index).toBe(1);
    sim.plan();
    expect(targets(sim, 'one')).toEqual([D(15000)]);
    expect(targets(sim, 'four')).toEqual([D(15000)]);
    expect(nodeStatus(sim, 'maintenance-c', 'one').drainMessage).not.toContain('fast-forwarded');
    sim.evict();
    expect(evicted(sim).slice(-2).sort()).toEqual(['p3', 's2']);
  });

  test('E3 a late pod that matches T(one) is evicted at the next round (NM-2.8)', () => {
    const sim = make();
    for (let i = 0; i < 3; i++) sim.step();
    sim.node('one').pods.push(pod('x', 1000));
    sim.step();
    expect(evicted(sim)).toContain('x');
  });
});
