// A maintenance's maintenanceStatus as text for `status nm/<name>` and `maintenance <name> status`:
// the stage and when each began, the one-line message, the conditions, where it is in its plan,
// and per node its drain targets, message (blocker lines), counts and the maintenances limiting it.
// Pure, so the layout is unit-tested (test/unit/cli-maintenance.test.ts).
import { entryString, type PlanEntry } from '../../api/drain-plan.js';
import type { MaintenanceNodeStatus, MaintenanceStatus, NodeCounts } from '../../workflows/maintenance/types.js';

/** Lanes, as the plan entries they are. */
export const lanesString = (lanes: readonly PlanEntry[]) => (lanes.length ? lanes.map(entryString).join(', ') : 'none');

const countsString = (c: NodeCounts) => `pending ${c.podsPendingEvictionRequest}, evicting ${c.activeEvictionRequests}, blocked ${c.podsBlocked}, kept ${c.podsKept}`;

const indent = (text: string, by: string) =>
  text
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => `${by}${l.trim()}`);

function nodeLines(n: MaintenanceNodeStatus): string[] {
  const out = [`  ${n.nodeRef.name}: targets ${lanesString(n.drainTargets)}${n.limitedBy.length ? `; limited by ${n.limitedBy.join(', ')}` : ''}`];
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
  lines.push(`nodes: ${s.selectedNodes} selected`);
  for (const n of s.nodeStatuses) lines.push(...nodeLines(n));
  if (s.nodeStatusesOmitted > 0) lines.push(`  … and ${s.nodeStatusesOmitted} more ${s.nodeStatusesOmitted === 1 ? 'node' : 'nodes'}`);
  return lines.join('\n');
}
