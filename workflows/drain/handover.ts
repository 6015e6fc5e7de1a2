// Targets mode (a NodeMaintenance's drain, nm-node/<node>/drain): the hand-over between plan entries
// kept short (issue 26 §5). The coordinator stays the node's single writer and hands the drain its
// targets with the holders and its targets state. With those the drain
// - tells each covering holder where it stands, straight (drainStanding; the coordinator relays the
//   same a step later), so a maintenance's A3 check does not wait for the relay;
// - applies a holder's advance itself (holderAdvanced, sent by the maintenance beside its register
//   with the coordinator), by the coordinator's own pure function (targets.ts updateTargets): first
//   come, first applied, and what it added goes back to the coordinator in its report (reached) to
//   be folded into R(N);
// - classifies its pods ahead, at the targets one more entry of each covering holder would give,
//   while it waits, so new targets that match find their look ready and evict at once.
import { getExternalWorkflowHandle, workflowInfo } from '@temporalio/workflow';
import type { DrainSnapshot } from '../../shared/drain.js';
import { advanced, foldReached, oneAhead, sameLanes, updateTargets, type Holder, type ReachedState } from '../maintenance/targets.js';
import { drainStandingSignal, type DrainTargets, type HolderAdvanced } from '../messages.js';
import { steps } from '../proxies.js';
import { classifyInput, looked } from './look.js';
import type { Drain } from './state.js';

/** What the drain keeps for the hand-over (in its status, so it survives continue-as-new). */
export interface HandoverState {
  /** Advances applied here that the coordinator's holders do not show yet: holder id → index. */
  advanced: Record<string, number>;
  /** Entries this drain added to R(N) by those advances, until the coordinator's state has them. */
  local: { reached: ReachedState['reached']; reachedBy: string[] };
  /** drainStanding reports sent (orders them), and the last one's content. */
  n: number;
  sent?: string;
}

const key = (e: { podType: string; podPriority?: number; podSelector?: unknown }) => JSON.stringify([e.podType, e.podPriority, e.podSelector ?? null]);

function handover(d: Drain): HandoverState {
  d.st.handover ??= { advanced: {}, local: { reached: [], reachedBy: [] }, n: 0 };
  return d.st.handover;
}

/** The entries `after` reached beyond `before`, with who added them. */
function added(before: ReachedState, after: ReachedState): { reached: ReachedState['reached']; reachedBy: string[] } {
  const known = new Set(before.reached.map(key));
  const out = { reached: [] as ReachedState['reached'], reachedBy: [] as string[] };
  after.reached.forEach((e, i) => {
    if (known.has(key(e))) return;
    out.reached.push(e);
    out.reachedBy.push(after.reachedBy[i] ?? '');
  });
  return out;
}

/**
 * The coordinator's newer targets, with the advances applied here that it does not show yet on top
 * (targets never lose a lane while covered, A4). Whether the drain must look again: lanes, final or
 * requesters differ from what it works to now (a new seq alone does not wake it).
 */
export function acceptTargets(d: Drain, t: DrainTargets): boolean {
  const cur = d.st.targets!;
  const h = handover(d);
  let next = t;
  if (t.holders && t.state) {
    const shown = new Map(t.holders.map((x) => [x.id, x]));
    h.advanced = Object.fromEntries(Object.entries(h.advanced).filter(([id, i]) => (shown.get(id)?.index ?? Infinity) < i));
    // Entries added here stay while the coordinator lacks them and who added them still holds the node.
    const names = new Set(t.holders.map((x) => x.name));
    const keep = h.local.reached.flatMap((e, i) => (t.state!.reached.some((r) => key(r) === key(e)) || !names.has(h.local.reachedBy[i]!) ? [] : [i]));
    h.local = { reached: keep.map((i) => h.local.reached[i]!), reachedBy: keep.map((i) => h.local.reachedBy[i]!) };
    let holders: Holder[] = t.holders;
    for (const [id, i] of Object.entries(h.advanced)) holders = advanced(holders, id, i);
    const prev = foldReached(t.state, { ...h.local, covering: t.state.covering });
    const up = updateTargets(prev, holders);
    const more = added(t.state, up.state);
    h.local = more;
    next = { ...t, holders, state: up.state, lanes: up.state.lanes };
  }
  d.st.targets = next;
  return !sameLanes(next.lanes, cur.lanes) || next.final !== cur.final || JSON.stringify(next.requesters ?? []) !== JSON.stringify(cur.requesters ?? []);
}

/** A holder moved on (holderAdvanced): the targets it makes now, applied here. Whether the lanes grew. */
export function applyAdvance(d: Drain, a: HolderAdvanced): boolean {
  const t = d.st.targets;
  if (!t?.holders || !t.state) return false;
  const holder = t.holders.find((x) => x.id === a.id);
  if (!holder || a.index <= holder.index) return false;
  const h = handover(d);
  h.advanced[a.id] = Math.max(h.advanced[a.id] ?? 0, a.index);
  const holders = advanced(t.holders, a.id, a.index);
  const up = updateTargets(t.state, holders);
  const more = added(t.state, up.state);
  h.local = { reached: [...h.local.reached, ...more.reached], reachedBy: [...h.local.reachedBy, ...more.reachedBy] };
  // `final` stays the coordinator's: it alone knows every holder (the drain ends once final and drained).
  d.st.targets = { ...t, holders, state: up.state, lanes: up.state.lanes };
  return !sameLanes(up.state.lanes, t.lanes);
}

/** For the coordinator's report: the entries this drain added that it has not folded in yet. */
export function reachedHere(d: Drain): ReachedState | undefined {
  const h = d.st.handover;
  if (!h?.local.reached.length) return undefined;
  return { ...h.local, covering: d.st.targets?.state?.covering ?? [] };
}

/** drainStanding to each covering holder when the lanes, finished or the seq changed. */
export function reportStanding(d: Drain): void {
  const t = d.st.targets;
  if (!t?.holders) return;
  const standing = { node: d.node, seq: t.seq, lanes: t.lanes, finished: d.st.finished ?? false, lowestUntargeted: d.st.lowestUntargeted ?? null };
  const h = handover(d);
  const content = JSON.stringify(standing);
  if (content === h.sent) return;
  h.sent = content;
  h.n++;
  for (const x of t.holders.filter((y) => y.stage === 'Drain')) {
    void getExternalWorkflowHandle(x.id).signal(drainStandingSignal, { ...standing, run: workflowInfo().firstExecutionRunId, n: h.n }).catch(() => undefined);
  }
}

/**
 * Finished at non-final targets: classify at the targets one more entry of each covering holder
 * would give, so new targets that match evict at once (the look is valid until the wait that
 * follows sees the node change). Nothing when no holder can move on.
 */
export async function lookAhead(d: Drain): Promise<void> {
  d.ahead = undefined;
  const t = d.st.targets;
  if (!t?.holders || !t.state || t.final) return;
  const lanes = updateTargets(t.state, oneAhead(t.holders)).state.lanes;
  if (sameLanes(lanes, t.lanes)) return;
  const snap = await steps.classifyPods.executeWithOptions({ summary: `classify the pods on ${d.node} ahead, for the next drain targets` }, [{ ...classifyInput(d), targets: lanes }]);
  d.ahead = { lanes, snap: looked(d, snap) };
}

/** The look taken ahead, when the targets now are the ones it was taken for (taken once). */
export function takeAhead(d: Drain): DrainSnapshot | undefined {
  const a = d.ahead;
  d.ahead = undefined;
  const t = d.st.targets;
  return a && t && !t.final && sameLanes(a.lanes, t.lanes) ? a.snap : undefined;
}
