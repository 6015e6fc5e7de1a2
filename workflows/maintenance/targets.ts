// drainTargets on one node (spec §3, A2 A4 A5 A6, and M's drainMessage for a node): pure and
// deterministic, used by the per-node coordinator `nm-node/<node>`. No Temporal, no clocks.
import { compareEntries, entryString, lanes as lanesOf, reached, sameEntry, selectorKey, type Lane, type PlanEntry } from '../../api/drain-plan.js';

/** A maintenance that holds the node (stage Cordon or Drain and its nodeSelector matches). */
export interface Holder {
  /** Stable identity (the maintenance's workflow ID or uid). */
  id: string;
  /** metadata.name, for messages and Events. */
  name: string;
  /** metadata.creationTimestamp (RFC 3339): older wins ties. */
  createdAt: string;
  stage: 'Cordon' | 'Drain';
  /** The effective plan P(M) (NM-1.5). */
  plan: PlanEntry[];
  /** i(M); plan.length once past the last entry. */
  index: number;
}

/** A holder that covered the node when it started to, while T(N) targeted pods its plan had not reached (A5). */
export interface FastForward {
  /** Holder id. */
  holder: string;
  /** The lanes of T(N) that prefix(M) does not reach. */
  lanes: Lane[];
  /** Names of the maintenances whose prefixes added those lanes (sorted). */
  setBy: string[];
}

/** What the node coordinator keeps between evaluations (plain JSON; survives continue-as-new). */
export interface NodeTargetsState {
  /** R(N): entries reached on N while it has been covered, without duplicates, in the order added. */
  reached: PlanEntry[];
  /** Name of the maintenance whose prefix first added reached[i] (for A5's Event). */
  reachedBy: string[];
  /** T(N) = lanes(R(N), selectors of covering plans and of earlier lanes). */
  lanes: Lane[];
  /** Ids of the holders that covered N at the last evaluation (to see who starts covering). */
  covering: string[];
  /** Holders still fast-forwarded on N (A5): until prefix(M) reaches every lane of T(N). */
  fastForwarded: FastForward[];
  /** See updateTargets. */
  final: boolean;
}

export interface TargetsUpdate {
  state: NodeTargetsState;
  /** T(N) or `final` differs from the previous state: the drain needs a new drainTargets signal. */
  changed: boolean;
  /** Holders fast-forwarded by this evaluation (they started to cover N): one `FastForwarded` Event each. */
  fastForwarded: FastForward[];
  /** T(N) is final: no covering holder can add a lane that targets more pods (the drain may do its volume wait once finished). */
  final: boolean;
}

const entryKey = (e: PlanEntry) => `${e.podType}/${e.podPriority}/${selectorKey(e.podSelector)}`;
const covers = (h: Holder) => h.stage === 'Drain';
/** The current entry of a holder; past its last entry its frontier is the last entry. */
export const currentEntry = (h: Holder): PlanEntry | undefined => h.plan[Math.min(h.index, h.plan.length - 1)];
const done = (h: Holder) => h.index >= h.plan.length;

function compareAge(a: Holder, b: Holder): number {
  const ta = Date.parse(a.createdAt);
  const tb = Date.parse(b.createdAt);
  if (Number.isFinite(ta) && Number.isFinite(tb) && ta !== tb) return ta - tb;
  return a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0;
}

/** Orders covering holders: least frontier first (selector ties by canonical JSON), then older, then name. */
export function compareHolders(a: Holder, b: Holder): number {
  const ea = currentEntry(a);
  const eb = currentEntry(b);
  const byEntry = ea && eb ? compareEntries(ea, eb, true) : ea ? -1 : eb ? 1 : 0;
  return byEntry || compareAge(a, b) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/** L(N): the covering holder with the least frontier. Cordon-stage holders never limit (A6). */
export function limiting(holders: readonly Holder[]): Holder | undefined {
  let best: Holder | undefined;
  for (const h of holders) if (covers(h) && h.plan.length && (!best || compareHolders(h, best) < 0)) best = h;
  return best;
}

/** prefix(M) = P(M)[0..i(M)] inclusive (the whole plan once past the last entry). */
export const prefix = (h: Holder): PlanEntry[] => h.plan.slice(0, Math.min(h.index + 1, h.plan.length));

/** A5 for holder h: the lanes of T(N) that prefix(M) does not reach (its entries read as lanes), and who added them. */
function fastForward(h: Holder, st: Pick<NodeTargetsState, 'reached' | 'reachedBy' | 'lanes'>): FastForward | undefined {
  const p = prefix(h);
  const lanes = st.lanes.filter((l) => !reached(p, l));
  if (!lanes.length) return undefined;
  // A lane prefix(M) misses has a reached entry prefix(M) misses (the source of its priority): name who added those.
  const setBy = [...new Set(st.reached.flatMap((e, i) => (reached(p, e) ? [] : [st.reachedBy[i]!])))].filter((n) => n !== h.name).sort();
  return { holder: h.id, lanes, setBy };
}

const EMPTY: NodeTargetsState = { reached: [], reachedBy: [], lanes: [], covering: [], fastForwarded: [], final: false };

export const sameLanes = (a: readonly Lane[], b: readonly Lane[]) => a.length === b.length && a.every((l, i) => sameEntry(l, b[i]!));

/**
 * One evaluation of N's targets from its holders (call it on every change of holders or of their
 * plan positions):
 * - A2: R ← R ∪ prefix(L(N)); T = lanes(R) with the selectors of the covering plans. The selectors of
 *   earlier lanes are kept too, so a holder leaving never removes a selector lane (A4).
 * - A4: with no covering holder, R and T are cleared; a later maintenance starts from nothing.
 * - A5: a holder that starts to cover N (it was not covering at the last evaluation) is fast-forwarded
 *   when some lane of T(N) is not reached by prefix(M) (reached() applied to prefix(M)'s entries as
 *   lanes: a lane of M's type and selector-or-none with priority ≥, or a higher type). It stays
 *   fast-forwarded (for its message) until prefix(M) reaches every lane. Selector containment is not
 *   analysed: {app=x,tier=y} is not taken as reached by {app=x}, so a report can be conservative.
 * - final: at least one holder covers and each covering holder is past its last entry or T reaches
 *   all its entries; the drain may then do its volume wait once finished.
 */
export function updateTargets(prev: NodeTargetsState | undefined, holders: readonly Holder[]): TargetsUpdate {
  const before = prev ?? EMPTY;
  const cov = holders.filter((h) => covers(h) && h.plan.length);
  if (!cov.length) {
    const state = { ...EMPTY, reached: [], reachedBy: [], lanes: [], covering: [], fastForwarded: [] };
    return { state, changed: before.lanes.length > 0 || before.final, fastForwarded: [], final: false };
  }
  const reachedNow = [...before.reached];
  const reachedBy = [...before.reachedBy];
  const l = limiting(cov)!;
  const known = new Set(reachedNow.map(entryKey));
  for (const e of prefix(l)) {
    if (!known.has(entryKey(e))) {
      known.add(entryKey(e));
      reachedNow.push(e);
      reachedBy.push(l.name);
    }
  }
  const selectors = [...before.lanes, ...cov.flatMap((h) => h.plan)].filter((e) => e.podSelector);
  const lanes = lanesOf(reachedNow, selectors);
  const base = { reached: reachedNow, reachedBy, lanes };

  const newcomers: FastForward[] = [];
  const fastForwarded: FastForward[] = [];
  for (const h of [...cov].sort(compareHolders)) {
    const wasForwarded = before.fastForwarded.some((f) => f.holder === h.id);
    const isNew = !before.covering.includes(h.id);
    if (!wasForwarded && !isNew) continue;
    const ff = fastForward(h, base);
    if (!ff) continue;
    fastForwarded.push(ff);
    if (isNew) newcomers.push(ff);
  }
  const final = cov.every((h) => done(h) || h.plan.every((e) => reached(lanes, e)));
  const state: NodeTargetsState = { ...base, covering: cov.map((h) => h.id).sort(), fastForwarded, final };
  return { state, changed: !sameLanes(before.lanes, lanes) || before.final !== final, fastForwarded: newcomers, final };
}

/** The maintenances (names) that fast-forwarded holder `id` on this node, while it still is; [] otherwise. */
export function fastForwardedBy(state: NodeTargetsState | undefined, id: string): string[] {
  return state?.fastForwarded.find((f) => f.holder === id)?.setBy ?? [];
}

/**
 * limitedBy for M on N (nodeStatuses[].limitedBy): [L(N).name] when M covers N, L(N) is another
 * maintenance, M is not past its last entry and T(N) does not reach M's current entry; [] otherwise.
 * Two maintenances at the same entry do not limit each other, whoever wins the tie.
 */
export function limitedBy(holders: readonly Holder[], m: string, lanes: readonly Lane[]): string[] {
  const self = holders.find((h) => h.id === m);
  if (!self || !covers(self) || done(self)) return [];
  const l = limiting(holders);
  const e = currentEntry(self);
  if (!l || l.id === m || !e || reached(lanes, e)) return [];
  return [l.name];
}

/** The facts M's drainMessage for N is made of (spec §3 "M's drainMessage for node N"). */
export interface NodeMessageFacts {
  /** M's name. */
  maintenance: string;
  /** The Node was deleted. */
  gone?: boolean;
  /** "ns/name" of the CycleNodeRequest that claimed N (NM-7.5). */
  claimedBy?: string;
  /** Final targets, finished and the volume wait ended. */
  drained?: boolean;
  /** fastForwardedBy(state, M). */
  fastForwardedBy?: readonly string[];
  /** L(N)'s name (undefined when no one covers). */
  limiting?: string;
  /** finished(N): no targeted pod left (Skip and Kept apart). */
  finished: boolean;
  /** reached(N, M's current entry); true once M is past its last entry. */
  reachedEntry: boolean;
  /** The first other node of M (by name) that is not ready for M's entry, and the name of its L when that is not M. */
  waitingForNode?: { name: string; limitedBy?: string };
}

/** First line of M's drainMessage for N: the first rule of spec §3 (1–7) that applies. */
export function nodeMessage(f: NodeMessageFacts): string {
  if (f.gone) return 'Node no longer exists';
  if (f.claimedBy) return `Cycled by CycleNodeRequest ${f.claimedBy}`;
  if (f.drained) return 'Drained';
  if (f.fastForwardedBy?.length) return `Draining (fast-forwarded by older ${f.fastForwardedBy.join(', ')})`;
  const other = f.limiting && f.limiting !== f.maintenance ? f.limiting : undefined;
  if (!f.finished) return other ? `Draining (limited by ${other})` : 'Draining';
  if (!f.reachedEntry && other) return `Waiting for ${other}.`;
  if (f.waitingForNode) {
    const x = f.waitingForNode.limitedBy && f.waitingForNode.limitedBy !== f.maintenance ? ` (${f.waitingForNode.limitedBy})` : '';
    return `Waiting for node ${f.waitingForNode.name}${x}.`;
  }
  // Finished and nothing to wait for: M advances at its next evaluation, or its volume wait runs.
  return 'Draining';
}

/** The node-level first line (NM-6.3): names L(N) whenever two or more maintenances cover N. */
export function nodeLevelMessage(holders: readonly Holder[], drained: boolean): string {
  if (drained) return 'Drained';
  const cov = holders.filter(covers);
  const l = limiting(holders);
  return cov.length >= 2 && l ? `Draining (limited by ${l.name})` : cov.length ? 'Draining' : 'Cordoned';
}

/** The `FastForwarded` Event's message (A5), e.g. "node one: drain targets [Default ≤ 10000] set by older maintenance-b are kept; this plan starts at Default ≤ 2000". */
export function fastForwardMessage(node: string, ff: FastForward, holder: Holder): string {
  const e = currentEntry(holder);
  const by = ff.setBy.length ? ` set by older ${ff.setBy.join(', ')}` : '';
  return `node ${node}: drain targets [${ff.lanes.map(entryString).join(', ')}]${by} are kept; this plan starts at ${e ? entryString(e) : 'its end'}`;
}

/** R(N) as a drain saw it (issue 26 §5): its entries, who added each, and the holders it knew covering. */
export type ReachedState = Pick<NodeTargetsState, 'reached' | 'reachedBy' | 'covering'>;

/**
 * Issue 26 §5: folds into the coordinator's state the entries its drain reached by advances it
 * applied itself. A holder the drain did not know as covering then (it registered meanwhile) counts
 * as new at the next evaluation, so it is fast-forwarded (A5) as if it had registered after the
 * advance: the order in which the drain took them.
 */
export function foldReached(st: NodeTargetsState, drain: ReachedState): NodeTargetsState {
  const known = new Set(st.reached.map(entryKey));
  const fresh = drain.reached.flatMap((e, i) => (known.has(entryKey(e)) ? [] : [{ e, by: drain.reachedBy[i] ?? '' }]));
  if (!fresh.length) return st;
  return {
    ...st,
    reached: [...st.reached, ...fresh.map((f) => f.e)],
    reachedBy: [...st.reachedBy, ...fresh.map((f) => f.by)],
    covering: st.covering.filter((id) => drain.covering.includes(id)),
  };
}

/** The holders with every covering one moved on by one entry: what the drain may look ahead for (issue 26 §5). */
export const oneAhead = (holders: readonly Holder[]): Holder[] => holders.map((h) => (covers(h) && !done(h) ? { ...h, index: h.index + 1 } : h));

/** The holders with `id` at `index` (never back). */
export const advanced = (holders: readonly Holder[], id: string, index: number): Holder[] => holders.map((h) => (h.id === id && index > h.index ? { ...h, index } : h));
