// #28: one NodeMaintenance holds at most `Selection.maxNodes` nodes (the worker's
// SLIPWAY_MAINTENANCE_MAX_NODES), so its carry, its status answer and its status stay bounded. A
// selection over it is refused before anything is touched (stages/hold.ts admitSelection) and stays
// refused until it shrinks; nodes joining a held selection past it are left out (members.ts).
import type { Selection } from '../../activities/maintenance/select.js';

export interface TooMany {
  selected: number;
  limit: number;
  /** Refused (nothing held), or admitted and these nodes left out of a selection that grew. */
  leftOut?: number;
}

/** The selection's excess over the limit, if any (an old history's selection has no limit). */
export function overLimit(sel: Selection): TooMany | undefined {
  const limit = sel.maxNodes;
  return limit !== undefined && sel.nodes.length > limit ? { selected: sel.nodes.length, limit } : undefined;
}

/** The one wording of the refusal: the status condition, the one-line message and the Warning Event. */
export function tooManyMessage(t: TooMany, stage: string): string {
  const what = `selects ${t.selected} nodes, more than the ${t.limit} one NodeMaintenance may hold (SLIPWAY_MAINTENANCE_MAX_NODES on the worker)`;
  const todo = `split it into NodeMaintenances of at most ${t.limit} nodes each (by a label such as topology.kubernetes.io/zone or a node-group label), or narrow its nodeSelector`;
  if (t.leftOut !== undefined) return `${what}: ${t.leftOut} selected node${t.leftOut === 1 ? '' : 's'} joined past the limit and ${t.leftOut === 1 ? 'is' : 'are'} not held; ${todo}`;
  if (stage === 'Idle') return `${what}: Cordon or Drain will be refused with nothing touched; ${todo}`;
  return `${what}: refused, nothing cordoned and no budget slot taken; ${todo}. It stays refused until it selects at most ${t.limit}`;
}
