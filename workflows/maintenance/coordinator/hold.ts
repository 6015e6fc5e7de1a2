// Holding: the Node shows who holds it, cordoned; an uncordon by anyone is reverted (NM-2.5), and a
// cycle's claim (NM-7.7) or the node's deletion is noticed, told by the bridge's Node watch (the
// signal nodeChanged) rather than found by a poll or a heartbeating watch per node (#26.1).
import { CancellationScope, sleep } from '@temporalio/workflow';
import { steps } from '../../proxies.js';
import { limiting, nodeLevelMessage } from '../targets.js';
import { NO_COUNTS } from '../types.js';
import type { HoldResult } from '../../../activities/maintenance/node-state.js';
import type { Coordinator } from '../node.js';
import { maintenanceRef } from './report.js';

/**
 * Without a signal, a held node is looked at (read, re-cordoned if need be) every half hour: the
 * backstop for a change no bridge told (none leading at the time). About 11 history events a look,
 * so about 22 an hour per held node while nothing changes.
 */
export const LOOK_BACKSTOP_MS = 30 * 60_000;
/** UncordonReverted at most once per node per 10 minutes. */
const REVERT_EVENT_PERIOD_MS = 10 * 60_000;

/** What the node is to show now, and its key (an unchanged one is not written again). */
export function holdInput(c: Coordinator) {
  const all = [...c.holders.values()];
  const lim = limiting(all);
  const status = {
    drainTargets: c.targets?.lanes ?? [],
    drainMessage: nodeLevelMessage(all, c.state() === 'Drained'),
    ...(c.drainReport?.counts ?? NO_COUNTS),
    limitedBy: lim && c.covering().length >= 2 ? [lim.name] : [],
    reason: [...new Set(all.map((h) => h.reason).filter(Boolean))].join('; '),
  };
  const holders = [...new Set(all.map((h) => h.name))];
  const input = { node: c.node, holders, state: c.state(), status };
  return { input, key: JSON.stringify(input) };
}

/** `look`: write even when nothing changed (the node watch returned: it reverts an uncordon by someone else). */
export async function holding(c: Coordinator, look: boolean): Promise<void> {
  const { input, key } = holdInput(c);
  if (!look && key === c.written) return; // the node shows it already
  if (!look && countsOnly(c, input)) return; // held back: the next pass writes them
  c.lookedAtMs = Date.now(); // every write reads the node first (and re-cordons it)
  const r = await steps.writeMaintenanceNodeState.executeWithOptions({ summary: `hold ${c.node} for ${input.holders.join(', ')}` }, [input]);
  await heldAs(c, key, input.holders, r);
}

/** What a hold write found is taken in: the node written as `key`, gone, claimed, or uncordoned by someone. */
export async function heldAs(c: Coordinator, key: string, holders: string[], r: HoldResult): Promise<void> {
  c.written = key;
  // What the write found (the node gone, a cycle's claim) changes the reports: another pass sends them.
  if (c.gone !== !r.exists || c.claimedBy !== r.claimedBy) c.dirty = true;
  c.gone = !r.exists;
  c.claimedBy = r.claimedBy;
  if (r.reverted) await uncordonReverted(c, holders);
}

/** The node state differs from the last write in its counts only, written under COUNTS_PERIOD_MS ago. */
function countsOnly(c: Coordinator, input: { status: Record<string, unknown> }): boolean {
  const { drainTargets, drainMessage, limitedBy, reason } = input.status;
  const main = JSON.stringify({ ...input, status: { drainTargets, drainMessage, limitedBy, reason } });
  if (c.heldBack(c.writtenMain, c.lookedAtMs, main)) return true;
  c.writtenMain = main;
  return false;
}

async function uncordonReverted(c: Coordinator, holders: string[]): Promise<void> {
  const now = Date.now();
  if (now - c.lastRevertEventMs < REVERT_EVENT_PERIOD_MS) return;
  c.lastRevertEventMs = now;
  const slot = Math.floor(now / REVERT_EVENT_PERIOD_MS);
  const message = `node ${c.node} was uncordoned while held by NodeMaintenance ${holders.join(', ')}; cordoned again`;
  await steps.recordEvent.executeWithOptions({ summary: 'event UncordonReverted on the node' }, [
    { involved: { kind: 'Node', apiVersion: 'v1', name: c.node }, type: 'Warning', reason: 'UncordonReverted', message, dedupKey: `${c.node}/uncordon/${slot}` },
  ]);
  for (const h of c.holders.values()) {
    await steps.recordEvent.executeWithOptions({ summary: `event UncordonReverted on ${h.name}` }, [
      { involved: maintenanceRef(h), type: 'Warning', reason: 'UncordonReverted', message, dedupKey: `${h.id}/${c.node}/uncordon/${slot}` },
    ]);
  }
}

/** Whether this pass's write is a look (forced even when nothing changed): once per watch return. */
export function takeLook(c: Coordinator): boolean {
  const look = c.lookDue;
  c.lookDue = false;
  return look;
}

/**
 * NM-2.5 and NM-7.7 without a poll or a heartbeat: the bridge's Node watch signals nodeChanged when a
 * held node is uncordoned or loses held-by, a cycle's claim comes or goes, or the node goes or comes
 * back, and once for every held node whenever its watch (re)starts (so a bridge or worker crash
 * loses nothing); the signal makes the next pass look. The backstop timer covers the rest: armed
 * once the node is written (or gone, or claimed), renewed only when it fires.
 */
export function armLook(c: Coordinator): void {
  if (c.written === undefined && !c.gone && !c.claimedBy) return stopLook(c);
  if (c.backstop) return;
  const scope = new CancellationScope();
  c.backstop = scope;
  scope.run(() => sleep(LOOK_BACKSTOP_MS)).then(
    () => {
      if (c.backstop !== scope) return;
      c.backstop = undefined;
      c.lookDue = true;
      c.dirty = true;
    },
    () => undefined, // cancelled: released
  );
}

export function stopLook(c: Coordinator): void {
  c.backstop?.cancel();
  c.backstop = undefined;
}
