// What a maintenance reports (the maintenanceStatus query, mirrored into the object's status):
// per-node messages by the rules of spec §3, the aggregate drainStatus, and the conditions.
import { reached, type Lane } from '../../api/drain-plan.js';
import type { PlanEntry } from '../../api/drain-plan.js';
import type { Condition, MaintenanceNodeStatus, MaintenanceStatus, NodeCounts, NodeReport, Stage } from './types.js';

/** Status shows at most this many nodes; the rest are counted (NM §1). */
export const NODE_STATUS_CAP = 1000;

/** The maintenance state the status is computed from. */
export interface Facts {
  name: string;
  stage: Stage;
  plan: PlanEntry[];
  index: number;
  nodes: Map<string, NodeReport | undefined>;
  planned: string[];
  selectedTotal: number;
  stageStatuses: Array<{ name: Stage; startTimestamp: string }>;
  selectsAll?: { total: number; acknowledged: boolean };
  observedGeneration?: number;
  completed: boolean;
  deleting: boolean;
}

const ZERO: NodeCounts = { podsPendingEvictionRequest: 0, activeEvictionRequests: 0, podsBlocked: 0, podsKept: 0 };

const isDone = (r: NodeReport | undefined) => !!r && (r.gone || r.drained);

/** The first line for node `name` as maintenance `f` sees it (spec §3, first rule that applies wins). */
export function nodeFirstLine(f: Facts, name: string, r: NodeReport | undefined): string {
  if (f.stage === 'Idle') return 'Planned';
  if (r?.gone) return 'Node no longer exists';
  if (f.stage === 'Cordon') return 'Cordoned';
  if (f.stage === 'Complete') return r?.released ? 'Released' : 'Releasing';
  if (!r) return 'Draining';
  if (r.drained) return 'Drained';
  if (!r.finished) {
    if (r.fastForwardedBy?.length) return `Draining (fast-forwarded by older ${r.fastForwardedBy.join(', ')})`;
    if (r.limiting && r.limiting !== f.name) return `Draining (limited by ${r.limiting})`;
    return 'Draining';
  }
  const entry = f.plan[Math.min(f.index, f.plan.length - 1)];
  if (entry && !reached(r.lanes, entry) && r.limiting && r.limiting !== f.name) return `Waiting for ${r.limiting}.`;
  const other = [...f.nodes].find(([n, x]) => n !== name && !(x?.gone || (x?.finished && (!entry || reached(x.lanes, entry)))));
  if (other) return `Waiting for node ${other[0]}.${other[1]?.limiting && other[1].limiting !== f.name ? ` (${other[1].limiting})` : ''}`;
  return 'Draining';
}

export function maintenanceStatus(f: Facts): MaintenanceStatus {
  const names = f.stage === 'Idle' ? f.planned : [...f.nodes.keys()].sort();
  const nodeStatuses: MaintenanceNodeStatus[] = names.slice(0, NODE_STATUS_CAP).map((name) => {
    const r = f.stage === 'Idle' ? undefined : f.nodes.get(name);
    const first = nodeFirstLine(f, name, r);
    return {
      nodeRef: { name },
      drainTargets: r?.lanes ?? [],
      drainMessage: r?.blockers && !r.drained ? `${first}\n${r.blockers}` : first,
      ...(r?.counts ?? ZERO),
      limitedBy: r?.limiting && r.limiting !== f.name && r.coveredBy.length >= 2 ? [r.limiting] : [],
    };
  });
  const reports = [...f.nodes.values()];
  const counts = nodeStatuses.reduce<NodeCounts>(
    (a, n) => ({
      podsPendingEvictionRequest: a.podsPendingEvictionRequest + n.podsPendingEvictionRequest,
      activeEvictionRequests: a.activeEvictionRequests + n.activeEvictionRequests,
      podsBlocked: a.podsBlocked + n.podsBlocked,
      podsKept: a.podsKept + n.podsKept,
    }),
    { ...ZERO },
  );
  const drained = f.stage !== 'Idle' && f.stage !== 'Cordon' && f.index >= f.plan.length && reports.every(isDone) && (f.stage === 'Drain' || f.completed || f.stageStatuses.some((s) => s.name === 'Drain'));
  const limitedBy = [...new Set(nodeStatuses.flatMap((n) => n.limitedBy))].sort();
  const waitingFor = [...new Set(reports.filter((r) => r && r.finished && r.limiting && r.limiting !== f.name).map((r) => r!.limiting!))];
  const drainMessage = drained ? 'Drained' : limitedBy.length ? `Draining (limited by ${limitedBy.join(', ')})` : reports.length && reports.every((r) => r?.finished) && waitingFor.length ? `Waiting for ${waitingFor.join(', ')}.` : 'Draining';
  return {
    stage: f.stage,
    stageStatuses: f.stageStatuses,
    drainPlan: f.plan,
    planIndex: f.index,
    selectedNodes: f.stage === 'Idle' ? f.planned.length : f.nodes.size,
    nodeStatuses,
    nodeStatusesOmitted: Math.max(0, names.length - NODE_STATUS_CAP),
    drainStatus: { reachedDrainTargets: reachedTargets(reports), drainMessage: f.stage === 'Drain' || drained ? drainMessage : f.stage === 'Idle' ? 'Planned' : 'NotDraining', ...counts },
    conditions: conditions(f, drained, drainMessage),
    message: oneLine(f, drained, drainMessage),
    observedGeneration: f.observedGeneration,
    completed: f.completed,
  };
}

/** Per-lane minimum over the existing nodes; a lane missing on any node is omitted (NM-1.6). */
function reachedTargets(reports: Array<NodeReport | undefined>): Lane[] {
  const live = reports.filter((r): r is NodeReport => !!r && !r.gone);
  if (!live.length) return [];
  return live[0]!.lanes.flatMap((l) => {
    const same = live.map((r) => r.lanes.find((x) => x.podType === l.podType && JSON.stringify(x.podSelector ?? null) === JSON.stringify(l.podSelector ?? null)));
    if (same.some((x) => !x)) return [];
    return [{ ...l, podPriority: Math.min(...same.map((x) => x!.podPriority)) }];
  });
}

function conditions(f: Facts, drained: boolean, drainMessage: string): Condition[] {
  const out: Condition[] = [];
  const drainedBefore = f.stageStatuses.some((s) => s.name === 'Drain');
  if (drained) out.push({ type: 'Drained', status: 'True', reason: f.nodes.size ? 'Drained' : 'NoNodes', message: 'every selected node is drained' });
  else if (f.stage === 'Drain') out.push({ type: 'Drained', status: 'False', reason: 'Draining', message: drainMessage });
  else if (f.stage === 'Complete' && drainedBefore) out.push({ type: 'Drained', status: 'False', reason: 'Canceled', message: 'Complete began before the nodes were drained' });
  else out.push({ type: 'Drained', status: 'False', reason: 'NotDraining', message: `stage ${f.stage}` });
  if (f.selectsAll && !f.selectsAll.acknowledged) {
    const message = `selects all ${f.selectsAll.total} nodes; the cluster may become degraded and unrecoverable. Annotate the NodeMaintenance with maintenance.slipway.dev/allow-all-nodes: "true" to proceed`;
    out.push({ type: 'Ready', status: 'False', reason: 'SelectsAllNodes', message });
    out.push({ type: 'SelectsAllNodes', status: 'True', reason: 'SelectsAllNodes', message });
  } else {
    out.push(f.completed ? { type: 'Ready', status: 'True', reason: 'Completed', message: 'maintenance complete' } : { type: 'Ready', status: 'True', reason: 'Active', message: `stage ${f.stage}` });
    if (f.selectsAll) out.push({ type: 'SelectsAllNodes', status: 'True', reason: 'Acknowledged', message: `selects all ${f.selectsAll.total} nodes (acknowledged)` });
    else out.push({ type: 'SelectsAllNodes', status: 'False', reason: 'SomeNodes', message: '' });
  }
  return out;
}

function oneLine(f: Facts, drained: boolean, drainMessage: string): string {
  if (f.selectsAll && !f.selectsAll.acknowledged) return `selects all ${f.selectsAll.total} nodes: waiting for the annotation maintenance.slipway.dev/allow-all-nodes: "true"`;
  const n = f.stage === 'Idle' ? f.planned.length : f.nodes.size;
  switch (f.stage) {
    case 'Idle':
      return `Idle: ${n} node${n === 1 ? '' : 's'} selected; nothing touched`;
    case 'Cordon':
      return `Cordon: ${n} node${n === 1 ? '' : 's'} cordoned`;
    case 'Drain':
      return drained ? `Drained: ${n} node${n === 1 ? '' : 's'}` : `Drain: ${drainMessage}`;
    case 'Complete':
      return f.completed ? 'Complete: nodes released' : 'Complete: releasing nodes';
  }
}
