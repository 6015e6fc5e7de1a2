// The drain's waits: each one long, heartbeating activity that returns when something it watches
// changed (or its window ends), cut short by any signal. The wave wait (pods leaving, refusals
// retried), the wait for newer targets, and the holds that touch nothing: an invalid DrainRule,
// pre-drain hooks. Idle costs history in proportion to changes, not time (issue 26): a window that
// ends with nothing changed is renewed in place, without a read, every MAX_WINDOW_MS at most.
import { ActivityCancellationType, CancellationScope, condition, isCancellation, workflowInfo } from '@temporalio/workflow';
import { ownersText } from '../../api/lifecycle-hooks.js';
import { podKey, truncate, UNREACHABLE_TERMINATING_SKIP_MS, type DrainSnapshot } from '../../shared/drain.js';
import { longSteps, watchSteps } from '../proxies.js';
import { classifyInput, looked } from './look.js';
import { lookAhead } from './handover.js';
import type { DrainPhase } from './status.js';
import { pdbNames } from './status.js';
import { ref, type Drain } from './state.js';
import type { WavePlan } from './waves.js';
import type { ReturnsVerdict } from './returns.js';

/**
 * The longest single wait: a renewal (about 6 history events: the activity's 3 and a workflow
 * task's 3) twice an hour while nothing changes. Every change the drain acts on ends a wait at once
 * (the activities watch for it), so the window only bounds how long one activity runs.
 */
export const MAX_WINDOW_MS = 30 * 60_000;
/** A window, its closing look and some slack: a dead worker's wait is retried within the heartbeat timeout, not this. */
const WAIT_TIMEOUT = '40 minutes';

/**
 * The waits that touch nothing (the targets wait, the holds, the volume and budget waits): watches
 * (workflows/proxies.ts: heartbeat every 20 s, a signal's cancel not waited for).
 */
export const waits = watchSteps(WAIT_TIMEOUT);
// A cancelled wave wait answers with the evictions it made before the cancel reached it; the
// drain waits for that answer (the SDK's effective default is TRY_CANCEL, which would drop it).
const waveWaits = longSteps(WAIT_TIMEOUT, { cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED });

/** The window ended with nothing changed: wait again in place, unless the run should continue as new first. */
const renew = (): boolean => !workflowInfo().continueAsNewSuggested;

/**
 * Runs a wait that a signal may cut short. The cut waits for the activity's own answer when its
 * cancellation type says so (the wave wait: it then reports the evictions it made before the cancel
 * reached it, so none goes uncounted). Undefined: cancelled with nothing to report.
 */
export async function untilWoken<T>(d: Drain, wait: () => Promise<T>): Promise<T | undefined> {
  if (d.wake) {
    d.wake = false;
    return undefined;
  }
  const scope = new CancellationScope();
  const waiting = scope.run(wait).then((v) => ({ v }), (err: unknown) => ({ err }));
  let done = await Promise.race([waiting, condition(() => d.wake).then(() => undefined)]);
  if (done === undefined) {
    scope.cancel();
    done = await waiting;
  }
  d.wake = false;
  if ('err' in done) {
    if (isCancellation(done.err)) return undefined;
    throw done.err;
  }
  return done.v;
}

/** When the wave wait must end at the latest: a policy deadline, a pause, an unreachable node's skip, an evacuator's deadline. */
function waveWindowMs(d: Drain, returns: ReturnsVerdict, snap: DrainSnapshot, leaving: string[], now: number): number {
  const { podEvictionTimeoutMs: timeoutMs, podEvictionTimeoutPolicy: policy } = d.settings!;
  // Fail also ends the drain over a provider held too long (NM-5.12): wake for it as for a refusal.
  const heldSince = policy === 'Fail' ? [...d.lockState.heldSince.values()] : [];
  const nextPolicy = timeoutMs !== undefined && policy !== 'Wait' ? Math.min(...[...d.refused.values()].map((b) => b.sinceMs), ...heldSince) + timeoutMs : Infinity;
  const nextPause = Math.min(...[...returns.paused.values()].map((p) => p.atMs));
  // Unreachable node: pods that cannot finish terminating are left after UNREACHABLE_TERMINATING_SKIP_MS; look again then.
  const nextUnreachable = snap.node.unreachable && leaving.length ? now + UNREACHABLE_TERMINATING_SKIP_MS + 1000 : Infinity;
  return Math.max(0, Math.min(nextPolicy, nextPause, nextUnreachable, d.evac.nextLookMs(), now + MAX_WINDOW_MS) - now);
}

/**
 * Waits for the wave to leave, a WaitCompleted pod to finish, a newcomer, a refused eviction to go
 * through (retried inside the activity), the next policy deadline or pause, or a signal.
 */
export async function waitForWave(d: Drain, plan: WavePlan, returns: ReturnsVerdict, snap: DrainSnapshot, leaving: string[]): Promise<void> {
  const now = Date.now();
  const refused = plan.toEvict.filter((p) => d.refused.has(podKey(p)));
  // Pods holding implicit locks count as completions: the provider may go once one has left.
  const completion = [...new Set([...plan.waitingCompletion.map((p) => p.uid), ...d.locks.holders, ...d.evac.evacuating.keys()])];
  const held = [...d.locks.held.values()];
  const windowMs = waveWindowMs(d, returns, snap, leaving, now);
  if (!leaving.length && !completion.length && !refused.length && !held.length) {
    // Nothing to watch: look again at once, or after the pause for pods that came back.
    if (Number.isFinite(Math.min(...[...returns.paused.values()].map((p) => p.atMs))) && !d.wake) await condition(() => d.wake, windowMs, { summary: 'pause before evicting pods that came back' });
    d.wake = false;
    return;
  }
  const summary = waitSummary(plan, refused.map((p) => d.refused.get(podKey(p))!.reason), leaving.length, completion.length, held);
  const lanes = JSON.stringify(d.st.targets?.lanes ?? null);
  const seq = d.st.targets?.seq;
  const evacuations = d.evac.watched();
  const r = await untilWoken(d, () =>
    waveWaits.waitForWave.executeWithOptions({ summary }, [{
      nodeName: d.node,
      leaving,
      completion,
      refused: refused.map(ref),
      reasons: Object.fromEntries(refused.map((p) => [p.uid, d.refused.get(podKey(p))!.reason])),
      known: snap.pods.map((p) => p.uid),
      drainRulesSeen: snap.drainRulesSeen,
      ...(held.length ? { nodeLocks: snap.node.locks ?? {} } : {}),
      nodeUnreachable: snap.node.unreachable,
      ...claimWatched(d, snap),
      gracePeriodSeconds: snap.node.unreachable ? 1 : undefined,
      concurrency: d.settings!.evictionConcurrency,
      qps: d.settings!.evictionQPS,
      timeoutMs: windowMs,
      endsAt: now + windowMs,
      ...(evacuations.length ? { evacuations } : {}),
      classify: classifyInput(d), // the wait ends with the next pass's look at the pods
    }]),
  );
  if (!r) return;
  // Taken at the lanes it was asked with: other lanes need a look of their own (a new seq alone does not).
  if (r.snapshot && JSON.stringify(d.st.targets?.lanes ?? null) === lanes) {
    d.fresh = looked(d, r.snapshot);
    d.freshFromWait = true;
  }
  d.account(r.evicted, refused);
  await d.evac.refused(r.refusedTimes ?? {});
  for (const x of r.refusals) {
    const b = d.refused.get(podKey(x));
    if (b) b.reason = x.reason ?? x.outcome;
  }
}

/**
 * Targets mode, nothing targeted left at non-final targets: report finished, then wait for newer
 * targets (the signal cuts the wait), an operator signal, or a change on the node (a newcomer, an
 * uncordon, a DrainRule change): the wave wait with nothing leaving ends on exactly those.
 */
export async function awaitTargets(d: Drain, snap: DrainSnapshot): Promise<DrainPhase> {
  const t = d.st.targets!;
  d.publish();
  // This wait evicts nothing (no refusal to retry), so newer targets need not wait for its cancel to land.
  const wait = () =>
    waits.waitForWave.executeWithOptions({ summary: `finished at drain targets #${t.seq}: waiting for the next targets` }, [{
      nodeName: d.node,
      leaving: [],
      completion: [],
      refused: [],
      known: snap.pods.map((p) => p.uid),
      drainRulesSeen: snap.drainRulesSeen,
      ...claimWatched(d, snap),
      concurrency: d.settings!.evictionConcurrency,
      qps: d.settings!.evictionQPS,
      timeoutMs: MAX_WINDOW_MS,
    }]);
  await lookAhead(d); // issue 26 §5: the next targets' look, taken while the holders decide
  for (;;) {
    const r = await untilWoken(d, wait);
    if (r?.end === 'Timeout' && renew()) continue;
    if (r) d.ahead = undefined; // the node changed: the look ahead is old
    return 'Draining';
  }
}

/**
 * A maintenance's drain (targets mode): its waits also end when a CycleNodeRequest's claim comes or
 * goes, so nothing read before a claim (the look ahead, a refusal retried in the wait) is acted on.
 */
const claimWatched = (d: Drain, snap: DrainSnapshot) => (d.st.targets ? { nodeClaimedBy: snap.node.claimedBy ?? null } : {});

/**
 * NM-7.7: a CycleNodeRequest claimed the node. Its coordinator stops sending targets once it sees
 * the claim, but an advance already on its way (holderAdvanced) or the look ahead would still evict:
 * touch nothing, no cordon and no eviction, until the claim changes or the node goes (a watch of the
 * node), or a signal; then read again.
 */
export async function holdWhileClaimed(d: Drain, claimedBy: string): Promise<DrainPhase> {
  d.st.claimedBy = claimedBy;
  d.ahead = undefined;
  d.publish();
  const want = { node: d.node, exists: true, held: false, claimedBy };
  const wait = () => waits.watchMaintenanceNode.executeWithOptions({ summary: `claimed by CycleNodeRequest ${claimedBy}: evicting nothing until it lets go` }, [want]);
  for (;;) {
    const r = await untilWoken(d, wait);
    if (r && !r.changed && renew()) continue; // the window ended with nothing changed
    return d.st.phase;
  }
}

/** An invalid DrainRule could decide about these pods: touch nothing until it changes (or a signal). */
export async function hold(d: Drain, snap: DrainSnapshot): Promise<DrainPhase> {
  d.st.heldBy = snap.heldBy;
  d.publish();
  const summary = `held by ${snap.heldBy.length === 1 ? 'an invalid DrainRule' : `${snap.heldBy.length} invalid DrainRules`}: waiting for a fix or deletion`;
  const wait = () => waits.waitForDrainRuleChange.executeWithOptions({ summary }, [{ timeoutMs: MAX_WINDOW_MS, since: snap.drainRulesSeen }]);
  while ((await untilWoken(d, wait)) === false && renew()); // false: no rule changed in the window
  return d.st.phase;
}

/** Pre-drain hooks on the node: touch nothing until their owners remove them (or a signal), then read again. */
export async function holdForHooks(d: Drain, owners: string[]): Promise<DrainPhase> {
  let holding = owners;
  for (;;) {
    d.st.hooks = holding;
    d.publish();
    const summary = `waiting for pre-drain hooks: ${ownersText(holding)}`;
    const r = await untilWoken(d, () => waits.waitForLifecycleHooks.executeWithOptions({ summary }, [{ nodeName: d.node, stage: 'pre-drain', timeoutMs: MAX_WINDOW_MS }]));
    // Released, gone or woken: read again. Other owners (the wait ends when they change): say so, and wait on.
    if (!r || !r.owners.length || r.nodeGone || !renew()) return d.st.phase;
    holding = r.owners;
  }
}

/** What the Web UI's pending activity says while the wave is out: the PDB that blocks it, first. */
export function waitSummary(plan: WavePlan, refusals: string[], leaving: number, completion: number, held: string[] = []): string {
  const wave = `(wave ${plan.order})`;
  if (held.length && !refusals.length) {
    const first = held[0]!.length > 120 ? `${held[0]!.slice(0, 117)}...` : held[0]!;
    return `${held.length} pod${held.length === 1 ? '' : 's'} ${first}${held.length > 1 ? ' ...' : ''} ${wave}`;
  }
  if (refusals.length) {
    const pdbs = [...new Set(refusals.flatMap(pdbNames))];
    const by = pdbs.length ? `PDB ${truncate(pdbs, 2)}` : truncate([...new Set(refusals)], 1);
    return `blocked by ${by}: retrying eviction of ${refusals.length} pod${refusals.length === 1 ? '' : 's'} ${wave}`;
  }
  const parts = [leaving ? `${leaving} pod${leaving === 1 ? '' : 's'} to leave` : '', completion ? `${completion} to complete` : ''].filter(Boolean);
  return `wait for ${parts.join(' and ')} ${wave}`;
}
