// What a maintenance reports (the maintenanceStatus query, mirrored into the object's status):
// per-node messages by the rules of spec §3, the aggregate drainStatus, and the conditions.
import { reached } from '../../api/drain-plan.js';
import { drainBlockers, nodesMessage } from '../../shared/drain-blockers.js';
import { budgetWaitSuffix, drainStatusMessage, firstNotReady, reachedDrainTargets, sumCounts, type ProgressNode } from './progress.js';
import { nodeMessage } from './targets.js';
import { fewNames } from '../drain/status.js';
import type { PlanEntry } from '../../api/drain-plan.js';
import type { MaintenancePreview, PreviewInputs } from '../../shared/maintenance-preview.js';
import { NO_COUNTS, type Condition, type MaintenanceNodeStatus, type MaintenanceStatus, type NodeCounts, type NodeReport, type Stage, type StageStatus } from './types.js';
import { ALLOW_ALL_NODES_ANNOTATION } from '../../api/names.js';
import type { NodeMaintenanceRolloutInput } from '../../api/rollout.js';
import type { RolloutRecord } from './rollout/record.js';
import { rolloutDrained, withRollout } from './rollout/status.js';
import { cannotFinishCondition } from './cannot-finish.js';
import { tooManyMessage, type TooMany } from './limit.js';

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
  /** The Idle preview: its one-line message and counts replace "Planned". */
  preview?: MaintenancePreview;
  /** What the latest Idle preview read (for the bridge's feed of changes). */
  previewInputs?: PreviewInputs;
  selectedTotal: number;
  stageStatuses: StageStatus[];
  selectsAll?: { total: number; acknowledged: boolean };
  observedGeneration?: number;
  /** The reason in effect (spec.reason, or setStage's). */
  reason?: string;
  completed: boolean;
  deleting: boolean;
  /** When every node was first seen drained: Drained stays True from then on, through Complete (NM-1.8). */
  drainedAt?: string;
  /** spec.rollout, and the rollout's record (docs/rolling-maintenance.md). */
  rolloutSpec?: NodeMaintenanceRolloutInput;
  rollout?: RolloutRecord;
  /** Without spec.rollout: why the budgets never let it finish (cannot-finish.ts). */
  cannotFinish?: string;
  /** #28: the selection is over the limit (limit.ts). */
  tooMany?: TooMany;
}

const ZERO = NO_COUNTS;

const isDone = (r: NodeReport | undefined) => !!r && (r.gone || r.drained);

/** The first line for node `name` as maintenance `f` sees it (spec §3, first rule that applies wins). */
export function nodeFirstLine(f: Facts, name: string, r: NodeReport | undefined): string {
  if (f.stage === 'Idle') return 'Planned';
  if (r?.gone) return 'Node no longer exists';
  if (r?.budgetWait && f.stage !== 'Complete') return r.budgetWait; // nothing cordoned yet
  if (r?.claimedBy && f.stage !== 'Complete') return nodeMessage({ maintenance: f.name, claimedBy: r.claimedBy, finished: false, reachedEntry: false });
  if (f.stage === 'Cordon') return 'Cordoned';
  if (f.stage === 'Complete') return r?.released ? 'Released' : 'Releasing';
  if (!r) return 'Draining';
  if (r.drainFailed) return `Drain failed: ${r.drainFailed}`;
  const entry = f.plan[f.index];
  const other = firstNotReady(f.plan, f.index, progressNodes(f), name);
  const otherReport = other ? f.nodes.get(other.name) : undefined;
  return nodeMessage({
    maintenance: f.name,
    gone: r.gone,
    claimedBy: r.claimedBy,
    drained: r.drained,
    fastForwardedBy: r.fastForwardedBy,
    limiting: r.limiting,
    finished: r.finished,
    reachedEntry: !entry || reached(r.lanes, entry),
    waitingForNode: other ? { name: other.name, limitedBy: otherReport?.limitedBy[0] } : undefined,
  });
}

/** The nodes as the planner's progress functions take them (a node not yet reported is not finished). */
export function progressNodes(f: Pick<Facts, 'nodes'>): ProgressNode[] {
  return [...f.nodes].map(([name, r]) => ({ name, lanes: r?.lanes ?? [], finished: !!r && r.finished && r.seq > 0, gone: r?.gone, claimed: !!r?.claimedBy, lowestUntargeted: r?.lowestUntargeted }));
}

/** Drain has reached the end of the plan and every node reports drained (or gone). */
export function isDrainedNow(f: Facts): boolean {
  if (f.rolloutSpec) return f.stage === 'Drain' && rolloutDrained(f.rollout, f.nodes.size);
  return f.stage === 'Drain' && f.index >= f.plan.length && [...f.nodes.values()].every(isDone);
}

export function maintenanceStatus(f: Facts): MaintenanceStatus {
  const names = f.stage === 'Idle' ? f.planned : [...f.nodes.keys()].sort();
  const previews = new Map(f.stage === 'Idle' ? (f.preview?.nodes ?? []).map((p) => [p.node, p]) : []);
  const nodeStatuses: MaintenanceNodeStatus[] = names.slice(0, NODE_STATUS_CAP).map((name) => {
    const r = f.stage === 'Idle' ? undefined : f.nodes.get(name);
    const p = previews.get(name);
    const first = p?.message ?? nodeFirstLine(f, name, r);
    return {
      nodeRef: { name },
      drainTargets: r?.lanes ?? [],
      // Once drained, the lines left are the pods NM-2.8 leaves on the node: named until Complete.
      // Then the pods its drain skipped or deleted instead of evicting (issue 24.9).
      drainMessage: [first, r?.blockers, r?.forced].filter(Boolean).join('\n'),
      ...(r?.counts ?? (p ? { ...ZERO, podsPendingEvictionRequest: p.evict, podsKept: p.kept } : ZERO)),
      limitedBy: r?.limitedBy ?? [],
    };
  });
  const reports = [...f.nodes.values()];
  const counts = sumCounts(nodeStatuses);
  const drained = f.drainedAt !== undefined || isDrainedNow(f);
  // What blocks the drain, where `kubectl get` and `describe` look first (not only in nodeStatuses).
  const blocked = f.stage === 'Drain' && !drained ? nodeStatuses.filter((n) => drainBlockers(n.drainMessage).length) : [];
  const drainMessage = drainStatusMessage(drained, reports.map((r) => ({ finished: !!r?.finished, limitedBy: r?.limitedBy ?? [], gone: r?.gone, claimed: !!r?.claimedBy, budgetWait: r?.budgetWait })));
  const status: MaintenanceStatus = {
    stage: f.stage,
    stageStatuses: f.stageStatuses,
    drainPlan: f.plan,
    planIndex: f.index,
    selectedNodes: f.stage === 'Idle' ? f.planned.length : refusal(f) && refusal(f)!.leftOut === undefined ? refusal(f)!.selected : f.nodes.size,
    nodeStatuses,
    nodeStatusesOmitted: Math.max(0, names.length - NODE_STATUS_CAP),
    drainStatus: { reachedDrainTargets: reachedDrainTargets(progressNodes(f)), drainMessage: f.stage === 'Drain' || drained ? drainMessage : f.stage === 'Idle' ? 'Planned' : 'NotDraining', ...counts },
    conditions: conditions(f, drained, drainMessage, blocked),
    message: oneLine(f, drained, drainMessage, blocked),
    observedGeneration: f.observedGeneration,
    ...(f.reason !== undefined && { reason: f.reason }),
    completed: f.completed,
    ...(f.stage === 'Idle' && !f.deleting && f.previewInputs ? { previewInputs: f.previewInputs } : {}),
  };
  // A rolling node's drain line is its own: its plan position, no other node to wait for.
  return withRollout(f, status, (name, index) => nodeFirstLine({ ...f, index, nodes: new Map([[name, f.nodes.get(name)]]) }, name, f.nodes.get(name)));
}

/** The Drained condition's message while nodes are blocked: the aggregate naming each blocked node's pods and PDBs. */
const blockedMessage = (drainMessage: string, blocked: readonly MaintenanceNodeStatus[]) =>
  nodesMessage(drainMessage, blocked.map((n) => ({ name: n.nodeRef.name, message: n.drainMessage })), 'blocked');

/** "2 pods blocked on node n1: Pods app/db-0, app/db-1: … PDB db (+1 more)": the one-line message's blocker part. */
function blockedLine(blocked: readonly MaintenanceNodeStatus[]): string {
  const pods = blocked.reduce((s, n) => s + n.podsBlocked, 0);
  const lines = blocked.flatMap((n) => drainBlockers(n.drainMessage).map((b) => `${b} (node ${n.nodeRef.name})`));
  const count = pods ? `${pods} pod${pods === 1 ? '' : 's'} blocked` : 'blocked';
  return `${count}: ${lines[0]}${lines.length > 1 ? ` (+${lines.length - 1} more)` : ''}`;
}

function conditions(f: Facts, drained: boolean, drainMessage: string, blocked: readonly MaintenanceNodeStatus[]): Condition[] {
  const out: Condition[] = [];
  const drainedBefore = f.stageStatuses.some((s) => s.name === 'Drain');
  if (drained) out.push({ type: 'Drained', status: 'True', reason: f.nodes.size ? 'Drained' : 'NoNodes', message: `every selected node is drained${stayedNote(f)}` });
  else if (f.stage === 'Drain' && blocked.length) out.push({ type: 'Drained', status: 'False', reason: 'DrainBlocked', message: blockedMessage(drainMessage, blocked) });
  else if (f.stage === 'Drain') out.push({ type: 'Drained', status: 'False', reason: 'Draining', message: drainMessage });
  else if (f.stage === 'Complete' && drainedBefore) out.push({ type: 'Drained', status: 'False', reason: 'Canceled', message: 'Complete began before the nodes were drained' });
  else out.push({ type: 'Drained', status: 'False', reason: 'NotDraining', message: `stage ${f.stage}` });
  const failed = [...f.nodes].filter(([, r]) => r?.drainFailed && f.stage === 'Drain');
  const tooMany = refusal(f);
  if (tooMany) {
    out.push({ type: 'Ready', status: 'False', reason: 'TooManyNodes', message: tooManyMessage(tooMany, f.stage) });
    out.push({ type: 'SelectsAllNodes', status: 'False', reason: 'SomeNodes', message: '' });
  } else if (failed.length) {
    out.push({ type: 'Ready', status: 'False', reason: 'DrainFailed', message: failed.map(([n, r]) => `node ${n}: ${r!.drainFailed}`).join('; ') });
    out.push({ type: 'SelectsAllNodes', status: f.selectsAll ? 'True' : 'False', reason: f.selectsAll ? 'Acknowledged' : 'SomeNodes', message: '' });
  } else if (f.selectsAll && !f.selectsAll.acknowledged && !f.completed) {
    // Once Complete has run, nothing waits for the annotation any more.
    const message = `selects all ${f.selectsAll.total} nodes; the cluster may become degraded and unrecoverable. Annotate the NodeMaintenance with ${ALLOW_ALL_NODES_ANNOTATION}: "true" to proceed`;
    out.push({ type: 'Ready', status: 'False', reason: 'SelectsAllNodes', message });
    out.push({ type: 'SelectsAllNodes', status: 'True', reason: 'SelectsAllNodes', message });
  } else {
    out.push(f.completed ? { type: 'Ready', status: 'True', reason: 'Completed', message: 'maintenance complete' } : { type: 'Ready', status: 'True', reason: 'Active', message: `stage ${f.stage}` });
    if (f.selectsAll?.acknowledged) out.push({ type: 'SelectsAllNodes', status: 'True', reason: 'Acknowledged', message: `selects all ${f.selectsAll.total} nodes (acknowledged)` });
    else if (f.selectsAll) out.push({ type: 'SelectsAllNodes', status: 'True', reason: 'SelectsAllNodes', message: `selects all ${f.selectsAll.total} nodes (never acknowledged; nothing was cordoned)` });
    else out.push({ type: 'SelectsAllNodes', status: 'False', reason: 'SomeNodes', message: '' });
  }
  const cannot = cannotFinishCondition(f);
  if (cannot) out.push(cannot);
  return out;
}

/** "; Pods stay on node a, named in nodeStatuses": drained nodes whose drain left pods on them (skipped, kept, or coming back). */
function stayedNote(f: Facts): string {
  const on = [...f.nodes].filter(([, r]) => r?.drained && r.blockers).map(([n]) => n).sort();
  if (!on.length) return '';
  return `; Pods stay on ${on.length === 1 ? 'node' : `${on.length} nodes:`} ${fewNames(on, 3)}, named in nodeStatuses`;
}

/** "Cordon: 2 nodes cordoned", less those a NodeDisruptionBudget still holds back (issue 15). */
function cordonLine(f: Facts, n: number): string {
  const live = [...f.nodes.values()].filter((r) => !r?.gone);
  const waiting = live.filter((r) => r?.budgetWait).length;
  return `Cordon: ${n - waiting} node${n - waiting === 1 ? '' : 's'} cordoned${budgetWaitSuffix(live.map((r) => ({ budgetWait: r?.budgetWait })))}`;
}

/** The limit's refusal or left-out nodes while they matter (not once Complete releases what it holds). */
const refusal = (f: Facts): TooMany | undefined => (f.stage === 'Complete' || f.completed ? undefined : f.tooMany);

function oneLine(f: Facts, drained: boolean, drainMessage: string, blocked: readonly MaintenanceNodeStatus[]): string {
  const tooMany = refusal(f);
  if (tooMany && tooMany.leftOut === undefined) return `${f.stage}: ${tooManyMessage(tooMany, f.stage)}`;
  if (f.selectsAll && !f.selectsAll.acknowledged) return `selects all ${f.selectsAll.total} nodes: waiting for the annotation ${ALLOW_ALL_NODES_ANNOTATION}: "true"`;
  const n = f.stage === 'Idle' ? f.planned.length : f.nodes.size;
  switch (f.stage) {
    case 'Idle':
      // How old the per-node preview lines are: recomputed on the changes that matter, yet never newer than this.
      return `Idle: ${n} node${n === 1 ? '' : 's'} selected; nothing touched${f.preview ? `; preview computed at ${f.preview.computedAt}` : ''}`;
    case 'Cordon':
      return cordonLine(f, n);
    case 'Drain':
      return drained ? `Drained: ${n} node${n === 1 ? '' : 's'}${stayedNote(f)}` : `Drain: ${drainMessage}${blocked.length ? `; ${blockedLine(blocked)}` : ''}`;
    case 'Complete':
      return f.completed ? 'Complete: nodes released' : 'Complete: releasing nodes';
  }
}
