// A maintenance's maintenanceStatus as text for `status nm/<name>` and `maintenance <name> status`:
// the stage and when each began, the one-line message, the conditions, where it is in its plan,
// and per node its drain targets, message (blocker lines), counts and the maintenances limiting it;
// with spec.rollout, the rollout's phase, counts and partitions, and each node's phase.
// Also the Idle preview for `maintenance <name> plan`. Pure, so the layout is unit-tested
// (test/unit/cli-maintenance.test.ts, test/unit/cli-maintenance-plan.test.ts).
import { entryString, type PlanEntry } from '../../api/drain-plan.js';
import type { NodePreview, PreviewPod } from '../../shared/maintenance-preview.js';
import type { MaintenanceNodeStatus, MaintenancePlan, MaintenanceStatus, NodeCounts, RolloutStatus } from '../../workflows/maintenance/types.js';

/** Lanes, as the plan entries they are. */
export const lanesString = (lanes: readonly PlanEntry[]) => (lanes.length ? lanes.map(entryString).join(', ') : 'none');

const countsString = (c: NodeCounts) => `pending ${c.podsPendingEvictionRequest}, evicting ${c.activeEvictionRequests}, blocked ${c.podsBlocked}, kept ${c.podsKept}`;

const indent = (text: string, by: string) =>
  text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => `${by}${l.trim()}`);

/** A rolling maintenance's node: its phase, since when, what it waits for, its message. */
function phaseLine(n: MaintenanceNodeStatus): string | undefined {
  if (!n.phase) return undefined;
  const since = n.phaseTimes?.filter((t) => t.phase === n.phase).at(-1)?.time;
  const waiting = n.phase === 'Waiting' && n.waitingFor ? ` for ${n.waitingFor}` : '';
  return `    rollout: ${n.phase}${waiting}${since ? ` since ${since}` : ''}${n.message ? `: ${n.message.split('\n')[0]}` : ''}`;
}

/** status.rollout in two lines: the phase and counts, then the partitions and what it waits for. */
export function rolloutLines(r: RolloutStatus): string[] {
  const out = [`rollout ${r.phase}: ${r.done} done, ${r.failed} failed, ${r.inProgress} in progress, ${r.waiting} waiting${r.maxUnavailable !== undefined ? `; at most ${r.maxUnavailable} at once` : ''}`];
  // The partition being rolled in brackets; nodes without the label are the "" partition, last.
  if (r.partitions?.length) out.push(`  partitions: ${r.partitions.map((p) => { const shown = p === '' ? '(unlabelled)' : p; return p === r.partition ? `[${shown}]` : shown; }).join(' → ')}`);
  if (r.message) out.push(`  ${r.message}`);
  return out;
}

function nodeLines(n: MaintenanceNodeStatus): string[] {
  const out = [`  ${n.nodeRef.name}: targets ${lanesString(n.drainTargets)}${n.limitedBy.length ? `; limited by ${n.limitedBy.join(', ')}` : ''}`];
  const phase = phaseLine(n);
  if (phase) out.push(phase);
  out.push(...indent(n.drainMessage, '    '));
  out.push(`    ${countsString(n)}`);
  return out;
}

export function renderMaintenance(s: MaintenanceStatus): string {
  const lines: string[] = [];
  const started = s.stageStatuses.map((st) => `${st.name} ${st.startTimestamp}`).join(', ');
  lines.push(`stage ${s.stage}${s.completed ? ' (completed)' : ''}${started ? ` — started: ${started}` : ''}`);
  lines.push(s.message);
  for (const c of s.conditions) lines.push(`  ${c.type}=${c.status} ${c.reason}${c.message ? `: ${c.message.split('\n')[0]}` : ''}`);
  const entry = s.drainPlan[s.planIndex];
  lines.push(`plan: ${s.drainPlan.length} entries; ${entry ? `at entry ${s.planIndex + 1}, ${entryString(entry)}` : 'past the last entry'}`);
  lines.push(`reached on every node: ${lanesString(s.drainStatus.reachedDrainTargets)}; ${countsString(s.drainStatus)}`);
  if (s.rollout) lines.push(...rolloutLines(s.rollout));
  lines.push(`nodes: ${s.selectedNodes} selected`);
  for (const n of s.nodeStatuses) lines.push(...nodeLines(n));
  if (s.nodeStatusesOmitted > 0) lines.push(`  … and ${s.nodeStatusesOmitted} more ${s.nodeStatusesOmitted === 1 ? 'node' : 'nodes'}`);
  return lines.join('\n');
}

/** Pods listed under one wave: name, plus what happens to it when it is not a plain eviction. */
function podLine(p: PreviewPod): string {
  const notes: string[] = [];
  if (p.action === 'Delete') notes.push(`deleted: ${p.reason}`);
  if (p.action === 'WaitCompleted') notes.push(`waited for, not evicted: ${p.reason}`);
  if (p.action === 'Evict' && p.reason !== 'default') notes.push(p.reason);
  if (p.blockedBy) notes.push(`blocked now by PDB ${p.blockedBy.join(', ')}`);
  return `        ${p.pod}${notes.length ? ` (${notes.join('; ')})` : ''}`;
}

function previewLines(n: NodePreview, plan: readonly PlanEntry[]): string[] {
  const out = [`  ${n.node}: ${n.message}`];
  if (!n.exists) return out;
  for (const e of n.errors) out.push(`    held: ${e}`);
  const moving = n.pods.filter((p) => p.action !== 'Skip');
  for (const entry of [...new Set(moving.map((p) => p.entry))]) {
    const inEntry = moving.filter((p) => p.entry === entry);
    out.push(`    entry ${entry + 1}: ${entry >= 0 && plan[entry] ? entryString(plan[entry]) : 'no plan entry'}`);
    for (const wave of [...new Set(inEntry.map((p) => p.wave))].sort((a, b) => a - b)) {
      out.push(`      wave ${wave}:`);
      out.push(...inEntry.filter((p) => p.wave === wave).map(podLine));
    }
  }
  const skipped = n.pods.filter((p) => p.action === 'Skip' && !p.kept);
  if (skipped.length) out.push('    skipped:', ...skipped.map((p) => `      ${p.pod}: ${p.reason}`));
  const kept = n.pods.filter((p) => p.kept);
  if (kept.length) out.push('    kept:', ...kept.map((p) => `      ${p.pod}: ${p.reason}`));
  const blocked = n.pods.filter((p) => p.blockedBy);
  if (blocked.length) out.push('    blocked now (PDB allows no disruption):', ...blocked.map((p) => `      ${p.pod}: PDB ${p.blockedBy!.join(', ')}`));
  if (n.podsOmitted > 0) out.push(`    … and ${n.podsOmitted} more ${n.podsOmitted === 1 ? 'pod' : 'pods'} not listed (counts include them)`);
  return out;
}

/** "12 s", "4 min", "3 h": how long ago, for a reader (a clock behind the worker's reads as 0 s). */
export function ago(at: string, now: Date): string {
  const s = Math.max(0, Math.round((now.getTime() - new Date(at).getTime()) / 1000));
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${Math.round(s / 3600)} h`;
}

/** `maintenance <name> plan`: the Idle preview, per node, entry and wave, and how old it is at `now`. */
export function renderPlan(p: MaintenancePlan, now: Date): string {
  const lines = [`maintenance ${p.name}: stage ${p.stage}; plan of ${p.plan.length} entries`];
  if (!p.preview) {
    lines.push(p.stage === 'Idle' ? 'no preview yet: the workflow is computing it' : 'no preview: it is computed only while Idle');
    return lines.join('\n');
  }
  if (p.stage !== 'Idle') lines.push(`(the preview as last computed while Idle; the stage is now ${p.stage})`);
  lines.push(`nodes: ${p.preview.nodes.length} previewed; computed ${ago(p.preview.computedAt, now)} ago at ${p.preview.computedAt}`);
  for (const n of p.preview.nodes) lines.push(...previewLines(n, p.plan));
  return lines.join('\n');
}
