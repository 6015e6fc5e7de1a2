// NM-3.7: the planner over random plans, node sets and pod sets (seeded, so a failure replays).
import { compareEntries, entryMatches, planOrderError, reached, selectorKey, targeted, type PlanEntry, type PodType } from '../../api/drain-plan.js';
import { limitedOn } from '../../workflows/maintenance/progress.js';
import { limitedBy, limiting } from '../../workflows/maintenance/targets.js';
import { Sim, type SimMaintenanceSpec, type SimPod } from '../support/maintenance-sim.js';

function mulberry32(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const TYPES: PodType[] = ['Default', 'Default', 'Default', 'DaemonSet', 'Static'];
const ENTRY_PRIOS = [500, 1000, 2000, 3000, 1e9];
const POD_PRIOS = [0, 400, 800, 1500, 2500, 5000, 1e9, 2e9, 2147483647];
const APPS = ['x', 'y', 'z'];

interface Case {
  seed: number;
  nodes: Record<string, SimPod[]>;
  specs: SimMaintenanceSpec[];
  late: Array<{ round: number; node: string; pod: SimPod }>;
  gone: Array<{ round: number; node: string }>;
}

export function randomCase(seed: number): Case {
  const r = mulberry32(seed);
  const int = (n: number) => Math.floor(r() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  const mkPod = (name: string): SimPod => {
    const podType = pick(TYPES);
    const blocked = r() < 0.3;
    return {
      name,
      podType,
      priority: pick(POD_PRIOS),
      labels: r() < 0.7 ? { app: pick(APPS) } : {},
      ...(blocked ? { blockedUntil: int(12) } : {}),
      ...(podType !== 'Default' && r() < 0.3 ? { kept: true } : {}),
    };
  };
  const nodeNames = Array.from({ length: 1 + int(4) }, (_, i) => `n${i}`);
  const nodes: Record<string, SimPod[]> = {};
  for (const n of nodeNames) nodes[n] = Array.from({ length: int(7) }, (_, i) => mkPod(`${n}-p${i}`));
  const specs: SimMaintenanceSpec[] = Array.from({ length: 1 + int(4) }, (_, i) => {
    const written: PlanEntry[] = [];
    for (let k = int(5); k > 0; k--) {
      const e: PlanEntry = { podType: pick(TYPES), podPriority: pick(ENTRY_PRIOS) };
      if (r() < 0.4) e.podSelector = { matchLabels: { app: pick(APPS) } };
      if (!written.some((w) => compareEntries(w, e, true) === 0)) written.push(e);
    }
    written.sort((a, b) => compareEntries(a, b, true));
    const members = nodeNames.filter(() => r() < 0.6);
    const drainAt = int(6);
    return {
      name: `m${i}`,
      plan: written,
      nodes: members.length ? members : [pick(nodeNames)],
      drainAt,
      ...(r() < 0.4 ? { cordonAt: Math.max(0, drainAt - 1 - int(3)) } : {}),
      // Some nodes start to match later (NM-2.6), while the maintenance drains.
      ...(members.length > 1 && r() < 0.3 ? { joins: { [members[members.length - 1]!]: drainAt + 1 + int(8) } } : {}),
    };
  });
  const late = Array.from({ length: int(3) }, (_, i) => ({ round: int(10), node: pick(nodeNames), pod: mkPod(`late${i}`) }));
  const gone = r() < 0.15 ? [{ round: int(10), node: pick(nodeNames) }] : [];
  return { seed, nodes, specs, late, gone };
}

/** The oracle's L(N): written from the spec's terms, independently of targets.ts. */
function oracleLimiting(sim: Sim, node: string) {
  const cov = sim.ms.filter((m) => m.stage === 'Drain' && sim.memberNodes(m).includes(node));
  const frontier = (m: (typeof cov)[number]) => m.plan[Math.min(m.index, m.plan.length - 1)]!;
  const rank = { Default: 0, DaemonSet: 1, Static: 2 };
  const key = (m: (typeof cov)[number]) => {
    const e = frontier(m);
    return [rank[e.podType], e.podPriority, e.podSelector ? 0 : 1] as const;
  };
  return [...cov].sort((a, b) => {
    const ka = key(a);
    const kb = key(b);
    for (let i = 0; i < 3; i++) if (ka[i] !== kb[i]) return ka[i]! - kb[i]!;
    const sa = selectorKey(frontier(a).podSelector);
    const sb = selectorKey(frontier(b).podSelector);
    if (sa !== sb) return sa < sb ? -1 : 1;
    if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1;
    return a.spec.name < b.spec.name ? -1 : 1;
  })[0];
}

const CASES = 300;
const MAX_ROUNDS = 400;

function check(c: Case) {
  const sim = new Sim(c.nodes, c.specs);
  for (const s of c.specs) expect(planOrderError(s.plan ?? [])).toBeUndefined();
  const problems: string[] = [];
  /** Entries of prefix(L(N)) over the rounds N has been covered without a break (the oracle's R(N)). */
  const hist = new Map<string, PlanEntry[]>();
  sim.onTargets = (n, prev, holders) => {
    const covered = holders.some((h) => h.stage === 'Drain');
    const wasCovered = !!prev && prev.covering.length > 0;
    const lanes = n.state!.lanes;
    if (!covered) {
      hist.delete(n.name);
      if (lanes.length) problems.push(`A4 round ${sim.round} ${n.name}: uncovered node keeps lanes`);
      return;
    }
    const l = oracleLimiting(sim, n.name)!;
    const h = wasCovered ? (hist.get(n.name) ?? []) : [];
    h.push(...l.plan.slice(0, Math.min(l.index + 1, l.plan.length)));
    hist.set(n.name, h);
    // NM-3.3 / A4: T(N) never loses a lane nor lowers a priority while N stays covered.
    if (wasCovered) {
      for (const old of prev.lanes) {
        if (!lanes.some((x) => x.podType === old.podType && selectorKey(x.podSelector) === selectorKey(old.podSelector) && x.podPriority >= old.podPriority)) {
          problems.push(`NM-3.3 round ${sim.round} ${n.name}: lost ${JSON.stringify(old)}`);
        }
      }
    }
    // The maintenance's view from a node report (limitedOn) agrees with the node's (limitedBy).
    const lName = limiting(holders)?.name;
    for (const x of holders) {
      const a = limitedBy(holders, x.id, lanes);
      const b = x.stage === 'Drain' ? limitedOn({ limiting: lName, lanes }, x) : [];
      if (a.join() !== b.join()) problems.push(`limitedOn round ${sim.round} ${n.name} ${x.name}: ${a} vs ${b}`);
    }
    // A2: T(N) targets exactly the pods the entries of the oracle's R(N) match.
    for (const p of n.pods) if (targeted(lanes, p) !== h.some((e) => entryMatches(e, p))) problems.push(`A2 round ${sim.round} ${n.name}: ${p.name} targeted=${targeted(lanes, p)}`);
  };

  const pods = new Map([...Object.values(c.nodes).flat(), ...c.late.map((x) => x.pod)].map((p) => [p.name, p]));
  const single = c.specs.length === 1 && !c.late.length && !c.specs[0]!.joins;
  let prevEvictions = 0;
  while (sim.round < MAX_ROUNDS && sim.ms.some((m) => m.stage !== 'Complete')) {
    for (const x of c.late) if (x.round === sim.round && !sim.node(x.node).gone) sim.node(x.node).pods.push({ ...x.pod });
    for (const g of c.gone) if (g.round === sim.round) sim.node(g.node).gone = true;
    sim.plan();
    // A7: the Drain maintenance(s) with the least frontier are limited nowhere: every node of theirs reaches their entry.
    const active = sim.ms.filter((m) => m.stage === 'Drain' && m.index < m.plan.length);
    if (active.length) {
      const least = active.reduce((a, b) => (compareEntries(b.plan[b.index]!, a.plan[a.index]!, true) < 0 ? b : a));
      for (const m of active.filter((x) => compareEntries(x.plan[x.index]!, least.plan[least.index]!, true) === 0)) {
        for (const n of sim.memberNodes(m)) if (!sim.node(n).gone && !reached(sim.lanes(n), m.plan[m.index]!)) problems.push(`A7 round ${sim.round}: ${m.spec.name} limited on ${n}`);
        for (const st of sim.status(m.spec.name).nodeStatuses) if (st.limitedBy.length) problems.push(`A7 round ${sim.round}: ${m.spec.name} limitedBy ${st.limitedBy} on ${st.name}`);
      }
    }
    const before = sim.ms.map((m) => m.index);
    const members = sim.ms.map((m) => sim.memberNodes(m));
    sim.evict();
    // NM-3.2: every eviction is of a pod targeted at that moment, i.e. matching an entry of the oracle's R(N).
    for (const e of sim.evictions.slice(prevEvictions)) {
      const p = pods.get(e.pod)!;
      if (!(hist.get(e.node) ?? []).some((x) => entryMatches(x, p))) problems.push(`NM-3.2 round ${e.round}: ${e.pod} evicted untargeted`);
      // NM-3.1: with one maintenance (and a fixed node set), no pod of a lower entry is left on any of its nodes.
      if (single) {
        const m = sim.ms[0]!;
        const rank = (x: SimPod) => m.plan.findIndex((en) => entryMatches(en, x));
        for (const other of m.spec.nodes.flatMap((nn) => (sim.node(nn).gone ? [] : sim.node(nn).pods))) {
          if (!other.kept && rank(other) >= 0 && rank(other) < rank(p)) problems.push(`NM-3.1 round ${e.round}: ${e.pod} evicted while ${other.name} of a lower entry is left`);
        }
      }
    }
    prevEvictions = sim.evictions.length;
    sim.progress();
    // NM-3.2: a maintenance moves on only when none of its nodes has a targeted pod left.
    sim.ms.forEach((m, i) => {
      if (m.index === before[i]) return;
      for (const n of members[i]!.map((x) => sim.node(x))) {
        if (!n.gone && n.pods.some((p) => !p.kept && targeted(sim.lanes(n.name), p))) problems.push(`NM-3.2 round ${sim.round}: ${m.spec.name} advanced past a targeted pod on ${n.name}`);
      }
    });
    if (problems.length) return { problems, rounds: sim.round, evictions: 0, fastForwards: 0 };
  }
  // A7: the planner terminates: every maintenance completes, and no pod that was not kept is left on a node it drained.
  if (sim.ms.some((m) => m.stage !== 'Complete')) problems.push(`A7: not done after ${MAX_ROUNDS} rounds: ${sim.ms.map((m) => `${m.spec.name}@${m.index}/${m.stage}`).join(' ')}`);
  for (const n of sim.nodes.values()) {
    const drained = sim.ms.some((m) => m.spec.nodes.includes(n.name) && (m.spec.joins?.[n.name] ?? 0) <= m.completedAt!);
    if (drained && !n.gone && n.pods.some((p) => !p.kept)) problems.push(`termination: ${n.name} keeps ${n.pods.filter((p) => !p.kept).map((p) => p.name)}`);
  }
  return { problems, rounds: sim.round, evictions: sim.evictions.length, fastForwards: sim.fastForwards.length };
}

describe('NM-3.7 planner property test (seeded random plans, nodes and pods)', () => {
  test('NM-3.7 / A7 every case terminates; T(N) is monotone while covered (NM-3.3); every eviction is of a targeted pod and no maintenance advances past one (NM-3.2, NM-3.1); the least frontier is never limited (A7)', () => {
    let evictions = 0;
    let fastForwards = 0;
    let maxRounds = 0;
    for (let seed = 1; seed <= CASES; seed++) {
      const out = check(randomCase(seed));
      if (out.problems.length) expect({ seed, problems: out.problems }).toEqual({ seed, problems: [] });
      evictions += out.evictions;
      fastForwards += out.fastForwards;
      maxRounds = Math.max(maxRounds, out.rounds);
    }
    // The cases exercise what they claim to: evictions, fast-forwards, and waits on blocked pods.
    expect(evictions).toBeGreaterThan(CASES);
    expect(fastForwards).toBeGreaterThan(10);
    expect(maxRounds).toBeGreaterThan(12);
  });
});
