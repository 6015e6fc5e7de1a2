// PROVISIONAL (the planner helper replaces this file): the maintenance side of the planner.
import { reached, type Lane, type PlanEntry } from '../../api/drain-plan.js';

export interface NodeProgress {
  name: string;
  lanes: Lane[];
  finished: boolean;
  gone?: boolean;
  claimed?: boolean;
}

/** A3: the plan position after every node has reached and finished the current entry, repeatedly. */
export function advance(plan: PlanEntry[], index: number, nodes: NodeProgress[]): number {
  let i = index;
  const taking = nodes.filter((n) => !n.claimed);
  while (i < plan.length && taking.every((n) => n.gone || (n.finished && reached(n.lanes, plan[i]!)))) i++;
  return i;
}
