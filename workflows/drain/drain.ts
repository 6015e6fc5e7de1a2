// The drain workflow: cordon, then evict the node's pods wave by wave, then wait for volumes to
// detach. Usable on its own or as a child of the cycle and maintenance workflows. Every side effect
// is an activity; this code only decides. A worker killed at any line resumes here from history,
// and the evict activity re-reads the pods before acting, so no pod is evicted twice.
import {
  ApplicationFailure,
  CancellationScope,
  condition,
  continueAsNew,
  getExternalWorkflowHandle,
  isCancellation,
  log,
  setCurrentDetails,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import type { DrainOptionsInput } from '../../api/drain-options.js';
import type { EvictResult } from '../../activities/drain/evict.js';
import { drainProgressSignal, drainStatusQuery, forceDeletePodSignal, retryNowSignal, skipPodSignal, type PodTarget } from '../messages.js';
import { drainMarkdown, drainMessage, emptyStatus, waveStatus, type DrainStatus, type ForcedAction } from './status.js';
import { podKey, type DrainSettings, type DrainSnapshot, type PodRef, type PodVerdict } from './types.js';
import { evictionBackoffMs, planWave } from './waves.js';
import { latestOnly, whenSettled } from '../progress.js';
import { longSteps, steps } from '../proxies.js';

const act = steps;
// Evictions heartbeat per pod; waits every 5 s.
const evictions = longSteps('10 minutes');
const waits = longSteps('10 minutes');

/** Longest single wait before the workflow looks again (status refresh, new pods). */
const MAX_WINDOW_MS = 5 * 60_000;
const VOLUME_WINDOW_MS = 15_000;

interface BlockedPod {
  uid: string;
  reason: string;
  sinceMs: number;
  attempts: number;
  nextAtMs: number;
}

/** State carried across continue-as-new. */
export interface DrainCarry {
  status: DrainStatus;
  blocked: Array<[string, BlockedPod]>;
  skipped: Array<[string, string]>;
}

export interface DrainInput {
  nodeName: string;
  options?: DrainOptionsInput;
  carry?: DrainCarry;
  /** A workflow (e.g. a cycle request) that wants the drain's message whenever it changes. */
  reportTo?: string;
}

export interface DrainResult {
  status: DrainStatus;
}

const ref = (p: PodRef): PodRef => ({ namespace: p.namespace, name: p.name, uid: p.uid });

export async function drainWorkflow(input: DrainInput): Promise<DrainResult> {
  const { nodeName } = input;
  const st: DrainStatus = input.carry?.status ?? emptyStatus(nodeName);
  const blocked = new Map<string, BlockedPod>(input.carry?.blocked ?? []);
  const skipBySignal = new Map<string, string>(input.carry?.skipped ?? []);
  const forceDeletes: PodTarget[] = [];
  const newSkips: PodTarget[] = [];
  let wake = false;

  setHandler(drainStatusQuery, () => st);
  setHandler(skipPodSignal, (t) => {
    newSkips.push(t);
    wake = true;
  });
  setHandler(forceDeletePodSignal, (t) => {
    forceDeletes.push(t);
    wake = true;
  });
  setHandler(retryNowSignal, () => {
    for (const b of blocked.values()) b.nextAtMs = 0;
    wake = true;
  });

  // The listener (a cycle) gets the message once it has held for 2 s (what blocks a drain is what
  // people need to see; passing states are not worth a signal); best effort, never blocking.
  let reported = '';
  const listener = input.reportTo ? getExternalWorkflowHandle(input.reportTo) : undefined;
  const progress = latestOnly(async () => listener?.signal(drainProgressSignal, { nodeName, message: st.message, evicted: st.evicted }));
  const settled = whenSettled(2000, () => progress.report());
  const publish = () => {
    st.message = drainMessage(st);
    setCurrentDetails(drainMarkdown(st));
    if (listener && st.message !== reported) {
      reported = st.message;
      settled.changed();
    }
  };
  const fail = (message: string, type: string): never => {
    st.phase = 'Failed';
    st.message = message;
    setCurrentDetails(`**Drain ${nodeName}: Failed**\n\n${message}`);
    throw ApplicationFailure.nonRetryable(message, type);
  };
  const recordForced = async (pod: PodVerdict, action: ForcedAction['action'], by: ForcedAction['by'], reason: string) => {
    const at = new Date().toISOString();
    st.forced.push({ pod: podKey(pod), action, by, at, reason });
    await act.recordEvent.executeWithOptions({ summary: `event on ${podKey(pod)}: ${action}` }, [{
      involved: { kind: 'Pod', apiVersion: 'v1', namespace: pod.namespace, name: pod.name, uid: pod.uid },
      type: 'Warning',
      reason: { Skip: 'DrainSkippedPod', ForceDelete: 'DrainForceDeletedPod', DeleteAfterTimeout: 'DrainDeletedPodAfterTimeout' }[action],
      message: `Slipway drain of node ${nodeName}: ${action} by ${by}: ${reason}`,
      dedupKey: `${workflowInfo().workflowId}/${pod.uid}/${action}`,
    }]);
  };

  const classify = () => act.classifyPods.executeWithOptions({ summary: `classify the pods on ${nodeName}` }, [{ nodeName, options: input.options }]);
  let snap: DrainSnapshot = await classify();
  // Invalid input touches nothing: no cordon, no eviction.
  if (snap.errors.length) fail(snap.errors.join('; '), 'InvalidDrainInput');
  const settings: DrainSettings = snap.settings!;
  if (!snap.node.exists) {
    st.phase = 'Drained';
    publish();
    st.message = `Node ${nodeName} not found; nothing to drain`;
    return { status: st };
  }
  if (!input.carry) {
    st.startedAt = new Date().toISOString();
    st.phase = 'Cordoning';
    publish();
    // A cycle cordons before it drains: no second round trip for a node that is cordoned already.
    if (!snap.node.cordoned) await act.cordonNode.executeWithOptions({ summary: `cordon ${nodeName}` }, [nodeName]);
    snap = { ...snap, node: { ...snap.node, cordoned: true } }; // read before the cordon
  }
  st.phase = 'Draining';

  for (;;) {
    if (!snap.node.exists) break; // removed by someone else mid-drain: nothing left to drain
    if (!snap.node.cordoned) {
      // Uncordoned mid-drain (kubectl uncordon, a re-registered Node): cordon again, or the
      // drain would chase replacements landing back on this node.
      if (!st.warnings.some((w) => w.pod === '' && w.warning.startsWith('node was uncordoned'))) {
        st.warnings.push({ pod: '', warning: 'node was uncordoned during the drain; cordoned again' });
      }
      await act.cordonNode.executeWithOptions({ summary: `cordon ${nodeName} again (uncordoned mid-drain)` }, [nodeName]);
    }
    const onNode = new Map(snap.pods.map((p) => [podKey(p), p]));

    // Operator signals: skips and force-deletes, each recorded in status and as an Event.
    for (const t of newSkips.splice(0)) {
      const pod = onNode.get(podKey(t));
      if (!pod) {
        log.warn('skipPod: pod is not on the node', { pod: podKey(t) });
        continue;
      }
      skipBySignal.set(podKey(t), t.reason ?? 'skipped by operator');
      blocked.delete(podKey(t));
      await recordForced(pod, 'Skip', 'signal', t.reason ?? 'skipped by operator');
    }
    const forced = forceDeletes.splice(0).flatMap((t) => {
      const pod = onNode.get(podKey(t));
      if (!pod) log.warn('forceDeletePod: pod is not on the node', { pod: podKey(t) });
      return pod ? [{ pod, reason: t.reason ?? 'force-deleted by operator' }] : [];
    });
    if (forced.length) {
      await act.deletePods.executeWithOptions({ summary: `force-delete ${forced.map((f) => podKey(f.pod)).join(', ')}` }, [
        { nodeName, pods: forced.map((f) => ref(f.pod)), gracePeriodSeconds: 0 },
      ]);
      for (const f of forced) {
        blocked.delete(podKey(f.pod));
        await recordForced(f.pod, 'ForceDelete', 'signal', f.reason);
      }
      snap = await classify();
      continue;
    }

    const plan = planWave(snap.pods, { skipped: new Set(skipBySignal.keys()) });
    if (st.wave && (plan.done || plan.order !== st.wave.order) && !st.completedWaves.includes(st.wave.order)) {
      st.completedWaves.push(st.wave.order);
    }
    if (plan.done) {
      st.wave = undefined;
      Object.assign(st, waveStatus(plan, new Map()));
      break;
    }

    // Forget refusals of pods that are no longer waiting for eviction.
    const evictable = new Set(plan.toEvict.map(podKey));
    for (const k of [...blocked.keys()]) if (!evictable.has(k)) blocked.delete(k);

    const now = Date.now();
    const due = plan.toEvict.filter((p) => (blocked.get(podKey(p))?.nextAtMs ?? 0) <= now);
    const leaving: string[] = [...plan.terminating.map((p) => p.uid)];
    if (due.length) {
      const results: EvictResult[] = await evictions.evictPods.executeWithOptions({ summary: `evict ${due.length} pods (wave ${plan.order})` }, [{
        nodeName,
        pods: due.map(ref),
        gracePeriodSeconds: snap.node.unreachable ? 1 : undefined, // no kubelet to honour a longer one
        concurrency: settings.evictionConcurrency,
        qps: settings.evictionQPS,
      }]);
      for (const r of results) {
        const k = podKey(r);
        if (r.outcome === 'Evicted' || r.outcome === 'AlreadyTerminating' || r.outcome === 'Gone') {
          if (r.outcome === 'Evicted') st.evicted++;
          if (r.outcome !== 'Gone') leaving.push(r.uid);
          blocked.delete(k);
        } else {
          const b = blocked.get(k) ?? { uid: r.uid, reason: '', sinceMs: now, attempts: 0, nextAtMs: 0 };
          b.attempts++;
          b.reason = r.reason ?? r.outcome;
          b.nextAtMs = now + evictionBackoffMs(b.attempts);
          blocked.set(k, b);
        }
      }
    }
    if (plan.toDelete.length) {
      await act.deletePods.executeWithOptions({ summary: `delete ${plan.toDelete.length} finished pods` }, [{ nodeName, pods: plan.toDelete.map(ref) }]);
      leaving.push(...plan.toDelete.map((p) => p.uid));
    }

    // The escape hatch for evictions refused longer than podEvictionTimeout.
    const timeoutMs = settings.podEvictionTimeoutMs;
    if (timeoutMs !== undefined) {
      const expired = [...blocked.entries()].filter(([, b]) => now - b.sinceMs >= timeoutMs);
      if (expired.length && settings.podEvictionTimeoutPolicy === 'Fail') {
        fail(
          `eviction refused for longer than podEvictionTimeout (${timeoutMs / 1000}s): ${expired.map(([k, b]) => `${k}: ${b.reason}`).join('; ')}`,
          'PodEvictionTimeout',
        );
      }
      if (expired.length && settings.podEvictionTimeoutPolicy === 'Delete') {
        const pods = expired.map(([k]) => onNode.get(k)!).filter(Boolean);
        // Grace period honoured.
        await act.deletePods.executeWithOptions({ summary: `delete ${pods.length} pods after podEvictionTimeout` }, [{ nodeName, pods: pods.map(ref) }]);
        for (const p of pods) {
          const reason = `eviction refused for longer than ${timeoutMs / 1000}s: ${blocked.get(podKey(p))!.reason}`;
          blocked.delete(podKey(p));
          leaving.push(p.uid);
          await recordForced(p, 'DeleteAfterTimeout', 'policy', reason);
        }
      }
    }

    for (const p of snap.pods) {
      for (const w of p.warnings) {
        if (!st.warnings.some((x) => x.pod === podKey(p) && x.warning === w)) st.warnings.push({ pod: podKey(p), warning: w });
      }
    }
    const reasons = new Map([...blocked].map(([k, b]) => [k, b.reason]));
    Object.assign(st, waveStatus(plan, reasons));
    publish();

    // Wait for the wave to leave, for a WaitCompleted pod to finish, for the next retry, or for a signal.
    const nextRetry = Math.min(...[...blocked.values()].map((b) => b.nextAtMs), Infinity);
    const nextPolicy =
      timeoutMs !== undefined && settings.podEvictionTimeoutPolicy !== 'Wait'
        ? Math.min(...[...blocked.values()].map((b) => b.sinceMs + timeoutMs), Infinity)
        : Infinity;
    const windowMs = Math.max(0, Math.min(nextRetry, nextPolicy, now + MAX_WINDOW_MS) - now);
    const completion = plan.waitingCompletion.map((p) => p.uid);
    // Nothing to wait for (e.g. every due pod was already gone): look again at once.
    const idle = !leaving.length && !completion.length && !blocked.size;
    if (windowMs > 0 && !wake && !idle) {
      if (leaving.length || completion.length) {
        const scope = new CancellationScope();
        const summary = `wait for ${leaving.length} pods to leave${completion.length ? ` and ${completion.length} to complete` : ''} (wave ${plan.order})`;
        const waiting = scope.run(() =>
          waits.waitForPodsGone.executeWithOptions({ summary }, [{ nodeName, uids: leaving, completionUids: completion, timeoutMs: windowMs }]),
        );
        const left = await Promise.race([waiting.catch(() => undefined), condition(() => wake).then(() => undefined)]);
        // Pods just left, so a PDB may allow the next disruption: retry refusals now, not after their backoff.
        if (left && left.remaining.length < leaving.length) for (const b of blocked.values()) b.nextAtMs = 0;
        if (wake) {
          scope.cancel();
          await waiting.catch((err) => {
            if (!isCancellation(err)) throw err;
          });
        }
      } else {
        await condition(() => wake, windowMs);
      }
    }
    wake = false;

    if (workflowInfo().continueAsNewSuggested) {
      const next: DrainInput = { nodeName, options: input.options, reportTo: input.reportTo, carry: { status: st, blocked: [...blocked], skipped: [...skipBySignal] } };
      await continueAsNew<typeof drainWorkflow>(next);
    }
    snap = await classify();
  }

  // Volumes: wait until only the skipped pods' volumes are attached (not on an unreachable node).
  if (!snap.node.unreachable) {
    st.phase = 'WaitingForVolumeDetach';
    const kept = new Set([...skipBySignal.keys()]);
    const ignoredClaims = snap.pods.filter((p) => p.action === 'Skip' || kept.has(podKey(p))).flatMap((p) => p.claims);
    const deadline = settings.volumeDetachTimeoutMs !== undefined ? Date.now() + settings.volumeDetachTimeoutMs : Infinity;
    // The first look returns at once, so status shows what is attached before any waiting.
    for (let first = true; ; first = false) {
      const windowMs = Math.min(first ? 0 : VOLUME_WINDOW_MS, deadline - Date.now());
      if (windowMs < 0 || (windowMs === 0 && !first)) {
        st.volumes = { message: `${st.volumes?.message ?? 'volumes still attached'}\n(volumeDetachTimeout reached; continuing)`, timedOut: true };
        break;
      }
      const v = await waits.waitForVolumeDetach.executeWithOptions({ summary: `wait for volumes to detach from ${nodeName}` }, [{ nodeName, ignoredClaims, windowMs }]);
      st.volumes = { message: v.message, timedOut: false };
      publish();
      if (v.detached) break;
    }
  }
  st.phase = 'Drained';
  publish();
  return { status: st };
}
