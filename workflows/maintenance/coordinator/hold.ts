// Holding: the Node shows who holds it, cordoned; an uncordon by anyone is reverted (NM-2.5), and a
// cycle's claim (NM-7.7) or the node's deletion is noticed, by a watch of the node rather than a poll.
import { CancellationScope } from '@temporalio/workflow';
import { steps, watchSteps } from '../../proxies.js';
import { limiting, nodeLevelMessage } from '../targets.js';
import { NO_COUNTS } from '../types.js';
import type { NodeWatchInput } from '../../../activities/maintenance/watch.js';
import type { HoldResult } from '../../../activities/maintenance/node-state.js';
import type { Coordinator } from '../node.js';
import { maintenanceRef } from './report.js';

/** The node watch returns at the latest after 20 minutes (RENEW_MS), so half an hour bounds it. */
const waits = watchSteps('30 minutes');
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
 * NM-2.5 and NM-7.7 without a poll: a watch of the node, expecting it as the last write left it,
 * returns when that no longer holds (uncordoned, held-by gone, a claim came or went, the node went
 * or came back) or at its renewal; then the next pass looks. Re-armed only when what it expects changes.
 */
export function watchNode(c: Coordinator): void {
  const want: NodeWatchInput | undefined = c.written === undefined && !c.gone && !c.claimedBy ? undefined : { node: c.node, exists: !c.gone, held: !c.gone && !c.claimedBy, ...(c.claimedBy ? { claimedBy: c.claimedBy } : {}) };
  const key = JSON.stringify(want ?? null);
  if (c.nodeWatch?.key === key) return;
  stopWatch(c);
  if (!want) return;
  const scope = new CancellationScope();
  const w = { key, scope };
  c.nodeWatch = w;
  scope
    .run(() => waits.watchMaintenanceNode.executeWithOptions({ summary: `watch ${c.node}` }, [want]))
    .then(
      () => {
        if (c.nodeWatch !== w) return;
        c.nodeWatch = undefined;
        c.lookDue = true;
        c.dirty = true;
      },
      () => undefined, // cancelled: a newer watch replaced it
    );
}

export function stopWatch(c: Coordinator): void {
  c.nodeWatch?.scope.cancel();
  c.nodeWatch = undefined;
}
