// Reporting: each holder hears T(N), whether the node is finished and drained, and the counts; the
// drain's forced actions are recorded on them (issue 24.9); the coordinator's own details and phase.
import { getExternalWorkflowHandle, setCurrentDetails, upsertSearchAttributes } from '@temporalio/workflow';
import { entryString, type Lane } from '../../../api/drain-plan.js';
import { maintenanceEventRef, parseWorkflowId } from '../../ids.js';
import { nodeReportSignal } from '../../messages.js';
import { steps } from '../../proxies.js';
import { PhaseAttr } from '../../search-attributes.js';
import { FORCED_OBJECT_EVENT_REASON, forcedLine, freshForced } from '../../drain/status.js';
import { fastForwardedBy, limitedBy, limiting } from '../targets.js';
import { NO_COUNTS, type HolderInfo, type NodeReport } from '../types.js';
import type { Coordinator } from '../node.js';

/** The latest forced actions a holder's status shows for the node. */
const FORCED_SHOWN = 5;

export async function reporting(c: Coordinator): Promise<void> {
  await recordForced(c);
  const all = [...c.holders.values()];
  const lim = limiting(all);
  const d = c.drainReport && c.drainReport.targetsSeq === c.seq ? c.drainReport : undefined;
  const phase = c.budgetWait !== undefined ? 'WaitingForBudget' : c.state();
  if (phase !== c.phase) {
    c.phase = phase;
    upsertSearchAttributes([{ key: PhaseAttr, value: phase }]);
  }
  setCurrentDetails(details(c, lim?.name));
  const sends: Array<Promise<void>> = [];
  for (const h of all) {
    const report: NodeReport = {
      node: c.node,
      seq: c.seq,
      lanes: c.targets?.lanes ?? [],
      finished: c.gone || (!!d?.finished && h.stage === 'Drain'),
      drained: c.gone || (!!d?.drained && c.final && h.stage === 'Drain'),
      volumeTimedOut: d?.volumeTimedOut,
      gone: c.gone,
      ...(c.claimedBy && !c.gone ? { claimedBy: c.claimedBy } : {}),
      released: false,
      counts: d?.counts ?? c.drainReport?.counts ?? NO_COUNTS,
      limiting: lim?.name,
      coveredBy: c.covering().map((x) => x.name),
      limitedBy: limitedBy(all, h.id, c.targets?.lanes ?? []),
      fastForwardedBy: fastForwardedBy(c.targets, h.id),
      blockers: (c.drainReport?.message ?? '').split('\n').slice(1).join('\n'),
      drainFailed: c.drainFailed,
      ...(c.forcedLines.length ? { forced: c.forcedLines.join('\n') } : {}),
      ...(c.budgetWait !== undefined ? { budgetWait: c.budgetWait } : {}),
      ...(d && d.lowestUntargeted !== undefined ? { lowestUntargeted: d.lowestUntargeted } : {}),
    };
    sends.push(send(c, h.id, report));
  }
  await Promise.all(sends);
}

/** One signal per changed report (a holder that closed is forgotten by its release). */
async function send(c: Coordinator, id: string, report: NodeReport): Promise<void> {
  const { seq: _seq, ...rest } = report;
  const key = JSON.stringify(rest);
  if (c.reportedTo.get(id) === key) return;
  // Counts and blocker lines only: at most every COUNTS_PERIOD_MS (each report is a task for the
  // maintenance, which recomputes its status over all its nodes). Anything its plan reads goes at once.
  const { counts: _c, blockers: _b, ...plan } = rest;
  const planKey = JSON.stringify(plan);
  const last = c.sentAt.get(id);
  if (c.heldBack(last?.planKey, last?.ms ?? -Infinity, planKey)) return;
  c.sentAt.set(id, { planKey, ms: Date.now() });
  c.reportedTo.set(id, key);
  await getExternalWorkflowHandle(id)
    .signal(nodeReportSignal, report)
    .catch(() => undefined);
}

/**
 * Issue 24.9: a pod the drain skipped or deleted instead of evicting is recorded on each maintenance
 * draining the node (every holder if none is in Drain any more): a Warning Event naming the pod, the
 * node, who asked and why, and a line in its status for the node.
 */
async function recordForced(c: Coordinator): Promise<void> {
  const fresh = freshForced(c.drainReport?.forced, c.forcedSeen);
  if (!fresh.length) return;
  const to = c.covering().length ? c.covering() : [...c.holders.values()];
  for (const f of fresh) {
    const message = forcedLine(c.node, f);
    for (const h of to) {
      await steps.recordEvent.executeWithOptions({ summary: `event ${FORCED_OBJECT_EVENT_REASON[f.action]} on ${h.name}` }, [
        { involved: maintenanceRef(h), type: 'Warning', reason: FORCED_OBJECT_EVENT_REASON[f.action], message, dedupKey: `${h.id}/${c.node}/${f.action}/${f.pod}/${f.at}` },
      ]);
    }
    c.forcedLines = [...c.forcedLines, `* ${message}`].slice(-FORCED_SHOWN);
  }
  c.forcedSeen = c.drainReport!.forced!.total;
}

function details(c: Coordinator, lim: string | undefined): string {
  const holders = [...c.holders.values()].map((h) => `${h.name} (${h.stage})`).join(', ');
  const head = c.budgetWait ?? (c.claimedBy ? `Cycled by CycleNodeRequest ${c.claimedBy}` : c.state());
  const lines = [`**Node ${c.node}: ${head}**`, '', `Held by: ${holders || 'nobody'}`];
  if (c.covering().length) lines.push(`Drain targets: ${lanesText(c.targets?.lanes ?? []) || 'none yet'}${c.final ? ' (final)' : ''}`);
  if (lim) lines.push(`Limited by: ${lim}`);
  if (c.drainReport?.message) lines.push('', '```', c.drainReport.message, '```');
  return lines.join('\n');
}

export const lanesText = (lanes: Lane[]) => lanes.map(entryString).join(', ');

/** The Event's involved object for a holder (its uid is part of its workflow ID). */
export function maintenanceRef(h: HolderInfo) {
  const id = parseWorkflowId(h.id);
  return maintenanceEventRef({ name: h.name, uid: id?.kind === 'maintenance' ? id.uid : undefined });
}
