// Draining: one pass per change: read, obey the operator's signals, plan the wave, evict, wait
// (wait.ts). A pass leaves Draining only on a classify's own read that shows nothing left.
import { log, workflowInfo } from '@temporalio/workflow';
import type { EvictResult } from '../../activities/drain/evict.js';
import type { PodTarget } from '../messages.js';
import { podKey, type DrainSnapshot, type NodeFacts, type PodVerdict } from '../../shared/drain.js';
import { longSteps, steps } from '../proxies.js';
import { lowestUntargeted, nodeCounts } from './counts.js';
import { applyLocks } from './locks.js';
import { classify, take } from './look.js';
import { takeAhead } from './handover.js';
import type { ReturnsVerdict } from './returns.js';
import { leavingOutcome, ref, type Drain } from './state.js';
import { FORCED_POD_EVENT_REASON, waveStatus, type DrainPhase, type ForcedAction } from './status.js';
import { awaitTargets, hold, holdWhileClaimed, waitForWave } from './wait.js';
import { planWave, type WavePlan } from './waves.js';

// Evictions heartbeat per pod.
const evictions = longSteps('10 minutes');

export async function draining(d: Drain): Promise<DrainPhase> {
  const fromWait = d.fresh !== undefined && d.freshFromWait;
  d.freshFromWait = false;
  const ahead = takeAhead(d); // issue 26 §5: new targets find their look taken ahead
  const snap = take(d) ?? ahead ?? (await classify(d));
  if (!snap.node.exists) {
    d.st.nodeGone = 'during'; // removed by someone else: nothing left to drain
    return 'Drained';
  }
  if (d.st.targets && snap.node.claimedBy) return holdWhileClaimed(d, snap.node.claimedBy);
  d.st.claimedBy = undefined;
  if (snap.heldBy.length) return hold(d, snap);
  d.st.heldBy = [];
  await keepCordoned(d, snap.node);
  if (await applySignals(d, snap)) return 'Draining'; // force-deleted: read again first
  d.returns.start(snap.pods);
  const returns = d.returns.judge(snap.pods, Date.now());
  const plan = planPass(d, snap, returns);
  await announceLocks(d);
  if (plan.done) {
    countPods(d, snap, []);
    if (d.st.targets) d.st.finished = true;
    if (d.st.targets && !d.st.targets.final) return awaitTargets(d, snap); // its wait lists the pods first
    // The drain leaves Draining only on a classify's own read, never on a wait's watched view.
    if (fromWait) return 'Draining';
    d.fresh = snap;
    return 'WaitingForVolumeDetach';
  }
  if (d.st.targets) d.st.finished = false;
  await d.evac.syncRequesters(d.requesting()); // NM-5.6: a maintenance that completed leaves
  const stay = await d.evac.pass(plan.toEvict.filter((p) => !d.locks.held.has(p.uid)), d.node, d.requesting());
  if (stay.length) {
    // NM-5.8: a DaemonSet or static pod whose evacuators all gave up is not evicted: kept, as without one.
    for (const p of stay) d.skipBySignal.set(podKey(p), `${p.podType} pod: no evacuator left; left for node shutdown`);
    return 'Draining';
  }
  const leaving = [...(await evictDue(d, plan, returns, snap.node)), ...d.evac.left];
  leaving.push(...(await applyTimeoutPolicy(d, snap)));
  showWave(d, plan, returns, snap);
  countPods(d, snap, [...leaving, ...d.evac.evacuating.keys()]);
  d.publish();
  await waitForWave(d, plan, returns, snap, leaving);
  return 'Draining';
}

/** Targets mode: the NM-1.7 counts for this pass (uids in `leaving` were just evicted or deleted). */
export function countPods(d: Drain, snap: DrainSnapshot, leaving: string[]): void {
  if (!d.st.targets) return;
  const held = snap.pods.filter((p) => d.locks.held.has(p.uid)).map(podKey);
  d.st.counts = nodeCounts(snap.pods, { skipped: new Set(d.skipBySignal.keys()), refused: new Set([...d.refused.keys(), ...held]), leaving: new Set(leaving) });
  d.st.lowestUntargeted = lowestUntargeted(snap.pods, new Set(d.skipBySignal.keys())) ?? null;
}

/** Uncordoned mid-drain (kubectl uncordon, a re-registered Node): cordon again, or replacements land back here. */
async function keepCordoned(d: Drain, node: NodeFacts): Promise<void> {
  if (node.cordoned) return;
  if (!d.st.warnings.some((w) => w.pod === '' && w.warning.startsWith('node was uncordoned'))) {
    d.st.warnings.push({ pod: '', warning: 'node was uncordoned during the drain; cordoned again' });
  }
  await steps.cordonNode.executeWithOptions({ summary: `cordon ${d.node} again (uncordoned mid-drain)` }, [d.node]);
  d.st.recordoned = (d.st.recordoned ?? 0) + 1; // a maintenance's coordinator reports it (UncordonReverted)
}

/** Operator signals: skips and force-deletes, each recorded in status and as an Event. True: pods were deleted. */
async function applySignals(d: Drain, snap: DrainSnapshot): Promise<boolean> {
  const onNode = new Map(snap.pods.map((p) => [podKey(p), p]));
  const find = (t: PodTarget, what: string) => {
    const pod = onNode.get(podKey(t));
    if (!pod) log.warn(`${what}: pod is not on the node`, { pod: podKey(t) });
    return pod;
  };
  for (const t of d.newSkips.splice(0)) {
    const pod = find(t, 'skipPod');
    if (!pod) continue;
    if (pod.terminating) {
      // Its eviction went out before the signal was seen: say so rather than report it kept.
      d.st.warnings.push({ pod: podKey(pod), warning: `skipPod arrived after the pod's eviction; it is leaving` });
      continue;
    }
    d.skipBySignal.set(podKey(t), t.reason ?? 'skipped by operator');
    d.refused.delete(podKey(t));
    await d.evac.withdrawPod(d.requesting(), pod.uid); // NM-5.7: skipPod beats evacuation
    await recordForced(d, pod, 'Skip', 'signal', t.reason ?? 'skipped by operator', t.requestedBy);
  }
  const forced = d.forceDeletes.splice(0).flatMap((t) => {
    const pod = find(t, 'forceDeletePod');
    return pod ? [{ t, pod, reason: t.reason ?? 'force-deleted by operator', requestedBy: t.requestedBy }] : [];
  });
  if (!forced.length) return false;
  d.forcing.push(...forced.map((f) => f.t));
  const results = await steps.deletePods.executeWithOptions({ summary: `force-delete ${forced.map((f) => podKey(f.pod)).join(', ')}` }, [
    { nodeName: d.node, pods: forced.map((f) => ref(f.pod)), gracePeriodSeconds: 0, forced: true },
  ]);
  d.forcing.length = 0;
  // Not sent: a skipPod for the pod came after the force (the latest wins); the next pass applies it.
  const notSent = new Set(results.filter((r) => r.outcome === 'Withdrawn').map((r) => r.uid));
  for (const f of forced) {
    if (notSent.has(f.pod.uid)) continue;
    d.refused.delete(podKey(f.pod));
    await recordForced(d, f.pod, 'ForceDelete', 'signal', f.reason, f.requestedBy);
  }
  return true;
}

/** The wave of this pass; pods that keep coming back are left out of it (returns.ts). */
function planPass(d: Drain, snap: DrainSnapshot, returns: ReturnsVerdict): WavePlan {
  d.st.returning = snap.pods.filter((p) => returns.left.has(p.uid)).map((p) => ({ pod: podKey(p), reason: returns.left.get(p.uid)! }));
  // Untargeted pods (targets mode) are not part of any wave: left alone, never waited for.
  const considered = snap.pods.filter((p) => !returns.left.has(p.uid));
  const skipped = new Set(d.skipBySignal.keys());
  // Dependency locks: providers held, the pods they wait for promoted into the wave (locks.ts).
  const { plan, locks } = applyLocks(planWave(considered.filter((p) => p.targeted !== false), { skipped }), considered, snap.node.locks, skipped);
  d.locks = locks;
  d.lockPods = new Map(considered.map((p) => [p.uid, p]));
  const now = Date.now();
  for (const uid of [...d.lockState.heldSince.keys()]) if (!locks.held.has(uid)) d.lockState.heldSince.delete(uid);
  for (const uid of locks.held.keys()) if (!d.lockState.heldSince.has(uid)) d.lockState.heldSince.set(uid, now);
  const wave = d.st.wave;
  if (wave && (plan.done || plan.order !== wave.order) && !d.st.completedWaves.includes(wave.order)) d.st.completedWaves.push(wave.order);
  if (plan.done) {
    d.st.wave = undefined;
    Object.assign(d.st, waveStatus(plan, new Map(), d.skipBySignal));
  }
  // Forget refusals of pods that are no longer waiting for eviction.
  const evictable = new Set(plan.toEvict.filter((p) => !locks.held.has(p.uid)).map(podKey));
  for (const k of [...d.refused.keys()]) if (!evictable.has(k)) d.refused.delete(k);
  return plan;
}

/** Evicts the wave's pods not yet tried (refusals are retried by the wait), deletes finished ones. Returns uids now leaving. */
async function evictDue(d: Drain, plan: WavePlan, returns: ReturnsVerdict, node: NodeFacts): Promise<string[]> {
  const leaving = plan.terminating.map((p) => p.uid);
  const due = plan.toEvict.filter((p) => !d.refused.has(podKey(p)) && !returns.paused.has(p.uid) && !d.locks.held.has(p.uid) && !d.evac.spared(p));
  if (due.length) {
    const results: EvictResult[] = await evictions.evictPods.executeWithOptions({ summary: `evict ${due.length} pods (wave ${plan.order})` }, [{
      nodeName: d.node,
      pods: due.map(ref),
      gracePeriodSeconds: node.unreachable ? 1 : undefined, // no kubelet to honour a longer one
      concurrency: d.settings!.evictionConcurrency,
      qps: d.settings!.evictionQPS,
    }]);
    leaving.push(...d.account(results, due));
    const refusedNow = results.filter((r) => !leavingOutcome(r) && r.outcome !== 'NotTried' && r.outcome !== 'Withdrawn');
    await d.evac.refused(Object.fromEntries(refusedNow.map((r) => [r.uid, 1])));
  }
  if (plan.toDelete.length) {
    const results = await steps.deletePods.executeWithOptions({ summary: `delete ${plan.toDelete.length} finished pods` }, [{ nodeName: d.node, pods: plan.toDelete.map(ref) }]);
    leaving.push(...results.filter((r) => r.outcome !== 'Withdrawn').map((r) => r.uid));
  }
  return leaving;
}

/** The escape hatch for evictions refused longer than podEvictionTimeout. Returns uids it deleted. */
async function applyTimeoutPolicy(d: Drain, snap: DrainSnapshot): Promise<string[]> {
  const { podEvictionTimeoutMs: timeoutMs, podEvictionTimeoutPolicy: policy } = d.settings!;
  if (timeoutMs === undefined || policy === 'Wait') return [];
  const now = Date.now();
  const expired = [...d.refused.entries()].filter(([, b]) => now - b.sinceMs >= timeoutMs);
  // A lock-held provider is never deleted by a policy (NM-5.12), but Fail may end the drain over it.
  const heldTooLong = policy === 'Fail' ? [...d.lockState.heldSince].filter(([, since]) => now - since >= timeoutMs) : [];
  if (policy === 'Fail' && (expired.length || heldTooLong.length)) {
    const names = new Map(snap.pods.map((p) => [p.uid, podKey(p)]));
    const why = [...expired.map(([k, b]) => `${k}: ${b.reason}`), ...heldTooLong.map(([uid]) => `${names.get(uid) ?? uid}: ${d.locks.held.get(uid) ?? 'held by a dependency lock'}`)];
    if (heldTooLong.length) await setRequired(d, []); // the drain gives up: dependents need not act any more
    d.fail(`eviction refused for longer than podEvictionTimeout (${timeoutMs / 1000}s): ${why.join('; ')}`, 'PodEvictionTimeout');
  }
  if (!expired.length) return [];
  const onNode = new Map(snap.pods.map((p) => [podKey(p), p]));
  const pods = expired.map(([k]) => onNode.get(k)).filter((p): p is PodVerdict => p !== undefined);
  // Grace period honoured. A pod the operator skipped or force-deletes meanwhile is not deleted (Withdrawn).
  const results = await steps.deletePods.executeWithOptions({ summary: `delete ${pods.length} pods after podEvictionTimeout` }, [{ nodeName: d.node, pods: pods.map(ref) }]);
  const withdrawn = new Set(results.filter((r) => r.outcome === 'Withdrawn').map((r) => r.uid));
  const deleted = pods.filter((p) => !withdrawn.has(p.uid));
  for (const p of deleted) {
    const reason = `eviction refused for longer than ${timeoutMs / 1000}s: ${d.refused.get(podKey(p))!.reason}`;
    d.refused.delete(podKey(p));
    await recordForced(d, p, 'DeleteAfterTimeout', 'policy', reason);
  }
  return deleted.map((p) => p.uid);
}

/** The wave, its refusals and pauses, and pod warnings, into status. */
function showWave(d: Drain, plan: WavePlan, returns: ReturnsVerdict, snap: DrainSnapshot): void {
  for (const p of snap.pods) {
    for (const w of p.warnings) {
      if (!d.st.warnings.some((x) => x.pod === podKey(p) && x.warning === w)) d.st.warnings.push({ pod: podKey(p), warning: w });
    }
  }
  const reasons = new Map([...d.refused].map(([k, b]) => [k, b.reason]));
  for (const p of plan.toEvict) if (returns.paused.has(p.uid)) reasons.set(podKey(p), returns.paused.get(p.uid)!.reason);
  for (const p of plan.toEvict) if (d.locks.held.has(p.uid)) reasons.set(podKey(p), d.locks.held.get(p.uid)!);
  Object.assign(d.st, waveStatus(plan, reasons, d.skipBySignal));
  // NM-5.4: a pod an evacuator moves is active, reported with the evacuator's own words.
  const evacuating = [...d.evac.evacuating.values()];
  if (d.st.wave && evacuating.length) {
    const moving = new Set(evacuating.map((e) => e.pod));
    d.st.wave.evicting = d.st.wave.evicting.filter((k) => !moving.has(k));
    d.st.wave.evacuating = evacuating.map((e) => ({ pod: e.pod, message: e.message })).sort((a, b) => (a.pod < b.pod ? -1 : 1));
  }
}

async function recordForced(d: Drain, pod: PodVerdict, action: ForcedAction['action'], by: ForcedAction['by'], reason: string, requestedBy?: string): Promise<void> {
  d.st.forced.push({ pod: podKey(pod), action, by, ...(requestedBy ? { requestedBy } : {}), at: new Date().toISOString(), reason });
  await steps.recordEvent.executeWithOptions({ summary: `event on ${podKey(pod)}: ${action}` }, [{
    involved: { kind: 'Pod', apiVersion: 'v1', namespace: pod.namespace, name: pod.name, uid: pod.uid },
    type: 'Warning',
    reason: FORCED_POD_EVENT_REASON[action],
    message: `Slipway drain of node ${d.node}: ${action} by ${by}${requestedBy ? ` from ${requestedBy}` : ''}: ${reason}`,
    dedupKey: `${workflowInfo().workflowId}/${pod.uid}/${action}`,
  }]);
}

/**
 * Dependency locks, told: a Warning Event on each promoted pod and for each cycle (once each), and
 * the node's maintenance-required labels set to the components whose provider is held (NM-5.10, 5.11).
 */
async function announceLocks(d: Drain): Promise<void> {
  for (const { pod, message } of d.locks.promoted) {
    if (!d.st.warnings.some((w) => w.pod === podKey(pod) && w.warning === message)) d.st.warnings.push({ pod: podKey(pod), warning: message });
    await podEventOnce(d, pod, 'DrainPromotedPod', message);
  }
  for (const message of d.locks.cycles) {
    const uid = [...d.locks.held].find(([, m]) => m === message)![0];
    if (!d.st.warnings.some((w) => w.warning === message)) d.st.warnings.push({ pod: '', warning: message });
    await podEventOnce(d, d.lockPods.get(uid)!, 'DependencyCycle', message);
  }
  await setRequired(d, d.locks.required);
}

async function podEventOnce(d: Drain, pod: PodVerdict, reason: string, message: string): Promise<void> {
  const key = `${pod.uid}/${reason}`;
  if (d.lockState.announced.has(key)) return;
  d.lockState.announced.add(key);
  await steps.recordEvent.executeWithOptions({ summary: `event on ${podKey(pod)}: ${reason}` }, [{
    involved: { kind: 'Pod', apiVersion: 'v1', namespace: pod.namespace, name: pod.name, uid: pod.uid },
    type: 'Warning',
    reason,
    message: `Slipway drain of node ${d.node}: ${message}`,
    dedupKey: `${workflowInfo().workflowId}/${key}`,
  }]);
}

/** The node's maintenance-required labels, written only when the set changes. */
async function setRequired(d: Drain, components: string[]): Promise<void> {
  if (components.join(',') === d.lockState.required.join(',')) return;
  await steps.setMaintenanceRequired.executeWithOptions({ summary: components.length ? `label ${d.node} maintenance-required: ${components.join(', ')}` : `remove maintenance-required labels from ${d.node}` }, [
    { nodeName: d.node, components },
  ]);
  d.lockState.required = components;
}