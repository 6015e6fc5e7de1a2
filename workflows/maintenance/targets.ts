// PROVISIONAL (the planner helper replaces this file): drain targets of one node from its holders.
import { compareEntries, lanes, reached, type Lane, type PlanEntry } from '../../api/drain-plan.js';

export interface Holder {
  id: string;
  name: string;
  createdAt: string;
  stage: 'Cordon' | 'Drain';
  plan: PlanEntry[];
  index: number;
}
export interface NodeTargetsState {
  reached: PlanEntry[];
  lanes: Lane[];
}

const frontier = (h: Holder) => h.plan[Math.min(h.index, h.plan.length - 1)]!;

export function limiting(holders: Holder[]): Holder | undefined {
  const drain = holders.filter((h) => h.stage === 'Drain');
  return drain.sort((a, b) => compareEntries(frontier(a), frontier(b), true) || (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0) || (a.name < b.name ? -1 : 1))[0];
}

export function updateTargets(prev: NodeTargetsState | undefined, holders: Holder[]) {
  const drain = holders.filter((h) => h.stage === 'Drain');
  if (!drain.length) return { state: { reached: [], lanes: [] }, changed: (prev?.lanes.length ?? 0) > 0, fastForwarded: [] as Array<{ holder: string; lanes: Lane[]; setBy: string[] }>, final: false };
  const l = limiting(drain)!;
  const r = [...(prev?.reached ?? [])];
  for (const e of l.plan.slice(0, Math.min(l.index, l.plan.length - 1) + 1)) if (!r.some((x) => compareEntries(x, e, true) === 0)) r.push(e);
  const t = lanes(r, drain.flatMap((h) => h.plan.filter((e) => e.podSelector)));
  const changed = JSON.stringify(t) !== JSON.stringify(prev?.lanes ?? []);
  const final = drain.every((h) => h.plan.every((e) => reached(t, e)));
  return { state: { reached: r, lanes: t }, changed, fastForwarded: [] as Array<{ holder: string; lanes: Lane[]; setBy: string[] }>, final };
}
