// WaitingForVolumeDetach: until only the kept pods' volumes are attached (not on an unreachable node:
// no kubelet would unmount them), or volumeDetachTimeout.
import { podKey } from '../../shared/drain.js';
import { countPods } from './pass.js';
import { classify, take } from './look.js';
import type { DrainPhase } from './status.js';
import type { Drain } from './state.js';
import { MAX_WINDOW_MS, untilWoken, waits } from './wait.js';

export async function waitingForVolumeDetach(d: Drain): Promise<DrainPhase> {
  const snap = take(d) ?? (await classify(d));
  const settings = d.settings!;
  if (!snap.node.exists) return 'Drained';
  if (snap.node.unreachable) {
    // No kubelet to unmount them: waiting could never end (Cluster API and Karpenter skip it too).
    d.st.volumes = { message: `not waited for: node ${d.node} is unreachable`, timedOut: false };
    return 'Drained';
  }
  countPods(d, snap, []);
  const kept = new Set([...d.skipBySignal.keys(), ...d.st.returning.map((r) => r.pod)]);
  // Skip (and Kept) pods stay, and so do pods no lane targets: their volumes are not waited for.
  const ignoredClaims = snap.pods.filter((p) => p.action === 'Skip' || p.targeted === false || kept.has(podKey(p))).flatMap((p) => p.claims);
  const deadline = settings.volumeDetachTimeoutMs !== undefined ? Date.now() + settings.volumeDetachTimeoutMs : Infinity;
  // The first look returns at once, so status shows what is attached before any waiting.
  for (let first = true; ; first = false) {
    // Later looks end when what is attached changes from what status shows (or the window ends).
    const windowMs = Math.min(first ? 0 : MAX_WINDOW_MS, deadline - Date.now());
    if (windowMs < 0 || (windowMs === 0 && !first)) {
      d.st.volumes = { message: `${d.st.volumes?.message ?? 'volumes still attached'}\n(volumeDetachTimeout reached; continuing)`, timedOut: true };
      return 'Drained';
    }
    const wait = () => waits.waitForVolumeDetach.executeWithOptions({ summary: `wait for volumes to detach from ${d.node}` }, [
      { nodeName: d.node, ignoredClaims, windowMs, ...(first ? {} : { shown: d.st.volumes?.message }) },
    ]);
    // Targets mode: newer targets (a signal) send the drain back to look at the pods again.
    const v = d.st.targets ? await untilWoken(d, wait) : await wait();
    if (d.st.targets && !d.st.finished) return 'Draining';
    if (!v) continue;
    // The kubelet died while we waited: as above, nothing will unmount them.
    if (v.unreachable) {
      d.st.volumes = { message: `not waited for: node ${d.node} is unreachable`, timedOut: false };
      return 'Drained';
    }
    d.st.volumes = { message: v.message, timedOut: false };
    d.publish();
    if (v.detached) return 'Drained';
  }
}
