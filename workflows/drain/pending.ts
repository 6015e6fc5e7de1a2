// Pending and Cordoning: read everything, refuse bad input, hold for invalid rules, pre-drain hooks
// or a budget slot, touching nothing; then one cordon (none when the node is cordoned already).
import { steps } from '../proxies.js';
import { awaitSlot, slotTaken } from './budget.js';
import { classify } from './look.js';
import type { DrainPhase } from './status.js';
import type { Drain } from './state.js';
import { hold, holdForHooks } from './wait.js';

export async function pending(d: Drain): Promise<DrainPhase> {
  const snap = await classify(d);
  if (snap.errors.length) d.fail(snap.errors.join('; '), 'InvalidDrainInput');
  if (!snap.node.exists) {
    d.st.nodeGone = 'before';
    return 'Drained';
  }
  if (snap.heldBy.length) return hold(d, snap);
  d.st.heldBy = [];
  // Pre-drain lifecycle hooks: nothing is cordoned or evicted while one is on the node.
  if (snap.node.preDrainHooks?.length) return holdForHooks(d, snap.node.preDrainHooks);
  delete d.st.hooks;
  // Issue 15: a CLI drain cordons only with a NodeDisruptionBudget slot; granted after a wait, Pending reads the node again.
  if (!(await slotTaken(d))) return awaitSlot(d);
  d.st.startedAt ??= new Date().toISOString();
  d.fresh = snap;
  return 'Cordoning';
}

export async function cordoning(d: Drain): Promise<DrainPhase> {
  const snap = d.fresh;
  if (!snap?.node.cordoned) {
    await steps.cordonNode.executeWithOptions({ summary: `cordon ${d.node}` }, [d.node]);
    // Targets mode: the coordinator cordoned the node before starting this drain, so someone uncordoned it.
    if (d.st.targets) d.st.recordoned = (d.st.recordoned ?? 0) + 1;
  }
  if (snap) d.fresh = { ...snap, node: { ...snap.node, cordoned: true } }; // read before the cordon
  return 'Draining';
}
