// NodeDisruptionBudget arithmetic, pure: how a count or percentage becomes a number of nodes
// (a percentage rounds up, as Karpenter's NodePool budgets and a PDB's maxUnavailable do), whether
// a cron window is in force, the limit in force now, and the admission decision over the ledger
// (status.disrupted / status.waiting): may holder H disrupt node N now, first come first served.
// The activities (activities/budget/) read and write the ledger; everything they decide is here.
import { cronError, nameValue, type LedgerEntry, type NodeDisruptionBudgetSpec } from '../api/node-disruption-budget.js';
import { parseDuration } from '../api/duration.js';
import { matchesSelector } from '../api/label-selector.js';

/**
 * maxDisrupted as a number of nodes out of `total`: a count as is; a percentage rounded UP
 * (ceil(pct × total / 100)), as Karpenter does (`GetScaledValueFromIntOrPercent(…, roundUp=true)`
 * in Budget.GetAllowedDisruptions): 10% of 5 nodes is 1, not 0, so a small pool is not frozen by a
 * percentage meant for a large one. 0% and 0 are 0 (a freeze) at any size.
 */
export function scaledLimit(max: number | string, total: number): number {
  if (typeof max === 'string' && max.endsWith('%')) return Math.ceil((Number(max.slice(0, -1)) * total) / 100);
  return Number(max);
}

// ---- cron (5 fields, UTC; robfig/cron's semantics, which Karpenter uses) ----------------------------

const MACROS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};
const BOUNDS: Array<[number, number]> = [[0, 59], [0, 23], [1, 31], [1, 12], [0, 7]];

interface Cron {
  fields: Array<Set<number>>;
  /** Day-of-month or day-of-week given as `*`: then the other alone decides (else either matches). */
  domStar: boolean;
  dowStar: boolean;
}

/** Parses a schedule cronError accepts; throws with its words otherwise. */
export function parseCron(text: string): Cron {
  const e = cronError(text);
  if (e) throw new Error(e);
  const t = text.trim().toLowerCase();
  const parts = (MACROS[t] ?? t).split(/ +/);
  const fields = parts.map((f, i) => {
    const [lo, hi] = BOUNDS[i]!;
    const out = new Set<number>();
    for (const item of f.split(',')) {
      const [range, stepText] = item.split('/');
      const step = stepText === undefined ? 1 : Number(stepText);
      let a = lo;
      let b = hi;
      if (range !== '*') {
        const [x, y] = range!.split('-');
        a = nameValue(x!);
        b = y === undefined ? (stepText === undefined ? a : hi) : nameValue(y);
      }
      for (let v = a; v <= b; v += step) out.add(i === 4 && v === 7 ? 0 : v);
    }
    return out;
  });
  return { fields, domStar: parts[2]!.startsWith('*'), dowStar: parts[4]!.startsWith('*') };
}

function dayMatches(c: Cron, d: Date): boolean {
  const dom = c.fields[2]!.has(d.getUTCDate());
  const dow = c.fields[4]!.has(d.getUTCDay());
  const month = c.fields[3]!.has(d.getUTCMonth() + 1);
  if (!month) return false;
  if (c.domStar || c.dowStar) return dom && dow;
  return dom || dow;
}

/** Whether the schedule fires at the minute of `d` (UTC). */
export function cronMatches(c: Cron, d: Date): boolean {
  return dayMatches(c, d) && c.fields[1]!.has(d.getUTCHours()) && c.fields[0]!.has(d.getUTCMinutes());
}

const MINUTE = 60_000;

/**
 * The latest firing at or before `nowMs` and after `nowMs - windowMs`, or undefined: the window is in
 * force when the schedule fired less than `duration` ago (Karpenter: the next firing after
 * now − duration is not after now). Walks back day by day, hour by hour, minute by minute.
 */
export function lastFiring(c: Cron, nowMs: number, windowMs: number): number | undefined {
  const stop = nowMs - windowMs;
  let t = Math.floor(nowMs / MINUTE) * MINUTE;
  while (t > stop) {
    const d = new Date(t);
    if (!dayMatches(c, d)) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) - MINUTE; // 23:59 the day before
    } else if (!c.fields[1]!.has(d.getUTCHours())) {
      t = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), d.getUTCHours()) - MINUTE; // hh-1:59
    } else if (!c.fields[0]!.has(d.getUTCMinutes())) {
      t -= MINUTE;
    } else {
      return t;
    }
  }
  return undefined;
}

export interface LimitInForce {
  nodes: number;
  /** "maxDisrupted 2" or `window "0 9 * * *" for 2h (until 11:00Z): maxDisrupted 0`. */
  reason: string;
  /** The window in force, if any (its index in spec.schedules). */
  window?: number;
}

/** The limit over `selected` nodes at `nowMs`: the base, or the lowest of the windows in force. */
export function limitInForce(spec: NodeDisruptionBudgetSpec, selected: number, nowMs: number): LimitInForce {
  let best: LimitInForce = { nodes: scaledLimit(spec.maxDisrupted, selected), reason: `maxDisrupted ${spec.maxDisrupted}` };
  let windowSeen = false;
  (spec.schedules ?? []).forEach((w, i) => {
    const ms = parseDuration(w.duration);
    const fired = lastFiring(parseCron(w.schedule), nowMs, ms);
    if (fired === undefined) return;
    const nodes = scaledLimit(w.maxDisrupted, selected);
    if (windowSeen && nodes >= best.nodes) return;
    windowSeen = true;
    const until = new Date(fired + ms).toISOString().replace(/:00\.000Z$/, 'Z');
    best = { nodes, reason: `window "${w.schedule}" for ${w.duration} (until ${until}): maxDisrupted ${w.maxDisrupted}`, window: i };
  });
  return best;
}

// ---- the admission decision ---------------------------------------------------------------------

export interface NodeLabels {
  name: string;
  labels: Record<string, string>;
  /** Cordoned or being deleted: disrupted, whoever did it (a person's `kubectl cordon`, a drain that ended leaving it cordoned). */
  disrupted?: boolean;
}

/**
 * The distinct nodes a budget counts as disrupted: those its ledger names, and the selected nodes
 * cordoned or being deleted by anyone else (`elsewhere`), since a node counts from its cordon to
 * its deletion or uncordon, whoever cordoned it.
 */
export function disruptedNodes(b: BudgetView, nodes: NodeLabels[]): { all: Set<string>; elsewhere: string[] } {
  const ledger = new Set(b.disrupted.map((e) => e.node));
  const elsewhere = nodes.filter((n) => n.disrupted && !ledger.has(n.name) && selects(b, n)).map((n) => n.name);
  return { all: new Set([...ledger, ...elsewhere]), elsewhere };
}

/** ", 1 of them cordoned or deleting outside the ledger" when some are. */
export const elsewhereText = (k: number): string => (k ? ` (${k} cordoned or deleting outside the ledger)` : '');

/** One budget as the decision sees it: the parsed spec (or why it is invalid) and its ledger. */
export interface BudgetView {
  name: string;
  spec?: NodeDisruptionBudgetSpec;
  /** Set when the stored spec fails the zod check: the budget admits nothing it selects (fails closed). */
  invalid?: string;
  /** For an invalid budget, the selector still read from it (undefined: it selects nothing). */
  selector?: NodeDisruptionBudgetSpec['nodeSelector'];
  disrupted: LedgerEntry[];
  waiting: LedgerEntry[];
}

const selectorOf = (b: BudgetView) => (b.spec ? b.spec.nodeSelector : b.selector);

/** Whether the budget counts and limits this node. */
export function selects(b: BudgetView, node: NodeLabels): boolean {
  if (!b.spec && !b.selector) return false;
  return matchesSelector(selectorOf(b), node.labels);
}

export type Decision = { ok: true } | { ok: false; reason: string };

/**
 * May `holder` disrupt `node` now under budget `b`? A node already disrupted (in the ledger, or
 * cordoned or deleting by anyone) costs no new slot. Otherwise the distinct nodes disrupted, plus those waiting ahead of this one (arrival
 * order, nodes not yet disrupted), plus this one must fit the limit in force; with perZone, the same
 * within the node's zone. `nodes` are the cluster's Nodes (for the selection and zones).
 */
export function admit(b: BudgetView, nodes: NodeLabels[], holder: string, node: string, nowMs: number): Decision {
  const name = `NodeDisruptionBudget ${b.name}`;
  if (b.invalid || !b.spec) return { ok: false, reason: `waiting for ${name}: it is invalid (${b.invalid ?? 'no spec'}); it admits nothing until fixed` };
  const spec = b.spec;
  const { all: disrupted, elsewhere } = disruptedNodes(b, nodes);
  if (disrupted.has(node)) return { ok: true };
  const selected = nodes.filter((n) => selects(b, n));
  const limit = limitInForce(spec, selected.length, nowMs);
  const me = b.waiting.findIndex((e) => e.node === node && e.holder === holder);
  const ahead = new Set((me < 0 ? b.waiting : b.waiting.slice(0, me)).map((e) => e.node).filter((n) => n !== node && !disrupted.has(n)));
  // A window, or a base limit of 0 (a freeze), says where the limit comes from: "0 of 0" alone reads as a bug.
  const why = limit.window !== undefined || limit.nodes === 0 ? ` (${limit.reason})` : '';
  const aheadText = (k: number) => (k ? `, ${k} waiting ahead` : '');
  if (disrupted.size + ahead.size + 1 > limit.nodes) {
    return { ok: false, reason: `waiting for ${name}: ${disrupted.size} of ${limit.nodes} nodes disrupted${elsewhereText(elsewhere.length)}${aheadText(ahead.size)}${why}` };
  }
  if (spec.perZone) {
    const key = spec.perZone.topologyKey;
    const labelsOf = new Map(nodes.map((n) => [n.name, n.labels]));
    const zone = labelsOf.get(node)?.[key];
    if (zone !== undefined) {
      const inZone = (n: string) => labelsOf.get(n)?.[key] === zone;
      const zoneLimit = scaledLimit(spec.perZone.maxDisrupted, selected.filter((n) => n.labels[key] === zone).length);
      const zd = [...disrupted].filter(inZone).length;
      const za = [...ahead].filter(inZone).length;
      if (zd + za + 1 > zoneLimit) return { ok: false, reason: `waiting for ${name}: ${zd} of ${zoneLimit} nodes disrupted in ${key}=${zone}${aheadText(za)}` };
    }
  }
  return { ok: true };
}


