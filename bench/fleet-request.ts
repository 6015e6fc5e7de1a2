// A stand-in CycleNodeRequest workflow for the bridge-fleet benchmark: it holds a fleet of nodes
// (EC2-length names and provider IDs; the count from the request's name, `fleet-<n>`), every one
// already touched (a change number each: the bridge mirrors them all, the hardest case), and moves a
// range of them to a phase on a signal. It answers cycleStatus and cycleNodes as the real request
// does (workflows/cycle/view.ts), so the bridge pages and writes exactly what it would.
import { condition, defineSignal, setHandler } from '@temporalio/workflow';
import type { CycleNodePhase } from '../api/cycle-node-request.js';
import { countByPhase, LISTED_UP_TO, MAX_LISTED_NODES } from '../api/cycle-bounds.js';
import { NODES_PAGE } from '../workflows/cycle/view.js';
import type { CycleNodesPage, CycleNodeStatus, CycleRequestInput, CycleStatus } from '../workflows/cycle/types.js';
import { cycleNodesQuery, cycleStatusQuery } from '../workflows/messages.js';

/** Node i of the fleet, as the request first reports it (Pending). */
export function fleetNode(i: number): CycleNodeStatus {
  const hex = i.toString(16).padStart(16, '0');
  return {
    nodeName: `ip-10-${Math.floor(i / 62500) % 256}-${Math.floor(i / 250) % 250}-${String(i % 250).padStart(5, '0')}.eu-west-1.compute.internal`,
    phase: 'Pending',
    providerID: `aws:///eu-west-1a/i-0${hex.slice(0, 16)}`,
    nodeGroup: 'bench-fleet-eu-west-1a',
  };
}

/** How many nodes a `fleet-<n>` request holds. */
export const fleetSize = (requestName: string) => Number(/-(\d+)$/.exec(requestName)?.[1] ?? 0);

export interface FleetAdvance {
  from: number;
  count: number;
  phase: CycleNodePhase;
  message?: string;
}
/** Moves nodes [from, from + count) to `phase`: each gets the next change number. */
export const fleetAdvanceSignal = defineSignal<[FleetAdvance]>('fleetAdvance');
export const fleetFinishSignal = defineSignal('fleetFinish');

// The real request's answers (workflows/cycle/view.ts) read its carry; this stand-in holds a plain
// list, so it answers in the same bounds from that: in flight first, then pending, up to the cap.
function boundedStatus(st: CycleStatus): CycleStatus {
  const moving = st.nodes.filter((n) => n.phase !== 'Pending' && n.phase !== 'Successful' && n.phase !== 'Failed');
  const listed = (moving.length ? moving : st.nodes.slice(0, LISTED_UP_TO)).slice(0, MAX_LISTED_NODES);
  return { ...st, nodes: listed, nodesByPhase: countByPhase(st.nodes) };
}

function nodesChangedAfter(st: CycleStatus, changedAfter: number, limit = NODES_PAGE): CycleNodesPage {
  const nodes = st.nodes.filter((n) => (n.change ?? 0) > changedAfter).sort((a, b) => (a.change ?? 0) - (b.change ?? 0));
  return { nodes: nodes.slice(0, Math.max(1, Math.min(limit, NODES_PAGE))), changes: st.changes ?? 0 };
}

export async function cycleNodeRequestWorkflow(input: CycleRequestInput): Promise<CycleStatus> {
  const n = fleetSize(input.request.name);
  const nodes = Array.from({ length: n }, (_, i) => ({ ...fleetNode(i), change: i + 1 }));
  const st: CycleStatus = { phase: 'Initialised', message: `bench fleet of ${n} nodes`, nodes, changes: n, nodesCycled: 0, nodesTotal: n, concurrency: 100 };
  let finished = false;
  setHandler(cycleStatusQuery, () => boundedStatus(st));
  setHandler(cycleNodesQuery, ({ changedAfter, limit }) => nodesChangedAfter(st, changedAfter, limit));
  setHandler(fleetAdvanceSignal, (a) => {
    for (const node of st.nodes.slice(a.from, a.from + a.count)) {
      node.phase = a.phase;
      node.message = a.message;
      node.change = st.changes = (st.changes ?? 0) + 1;
    }
    st.nodesCycled = st.nodes.filter((x) => x.phase === 'Successful').length;
    st.phase = 'WaitingTermination';
  });
  setHandler(fleetFinishSignal, () => {
    finished = true;
  });
  await condition(() => finished);
  return boundedStatus(st);
}
