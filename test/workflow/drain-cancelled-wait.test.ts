// What a signal's cancel leaves behind. A signal (skipPod, forceDeletePod, retryNow) cancels the
// running waitForWave, which retries refused evictions; the cancel reaches the activity only with
// the answer to its next heartbeat, and the worker throttles heartbeats to 0.8 × heartbeatTimeout
// (12 s for the drain's waits). Until then the cancelled wait goes on retrying, and an eviction it
// makes is real. This file's worker throttles as production does.
import type { WaveWaitInput } from '../../activities/drain/wave-wait.js';
import { skipPodSignal } from '../../workflows/messages.js';
import { FakeDrain, fakeWhen, pod, runDrain, statusWhen } from '../support/fake-drain.js';
import { useWorkflowEnv } from '../support/workflow-env.js';

const env = useWorkflowEnv({ fastCancellation: false });
const PDB = "Cannot evict pod as it would violate the pod's disruption budget.\nThe disruption budget web needs 2 healthy pods and has 2 currently";

test('the status tells the truth about a pod that a cancelled wave wait evicted after a skipPod: counted as evicted, not reported as skipped', async () => {
  const fake = new FakeDrain('skip-race', [pod('web'), pod('api')]);
  fake.refusals.set('app/web', PDB);
  const result = await runDrain(env(), fake, {
    during: async (h) => {
      await statusWhen(h, 'the drain blocked', (s) => (s.wave?.blocked.length ?? 0) > 0);
      await fakeWhen('a wave wait retrying web', () => fake.callsOf('waitForWave').some((c) => c.endedAt === undefined && (c.input as WaveWaitInput).refused.some((p) => p.name === 'web')));
      await h.signal(skipPodSignal, { namespace: 'app', name: 'web', reason: 'leave it' });
      await fakeWhen('the skip recorded', () => fake.events.length === 1);
      fake.refusals.clear(); // the PDB allows one more disruption a moment later
      await new Promise((r) => setTimeout(r, 500));
    },
  });
  const webEvicted = fake.on('app/web') === undefined;
  const skipped = result.status.forced.some((f) => f.pod === 'app/web' && f.action === 'Skip');
  // Every pod the drain's activities evicted is in the count, and a pod is reported skipped (left
  // on the node) only if it is still there.
  expect({ evicted: result.status.evicted, reportedSkipped: skipped }).toEqual({ evicted: webEvicted ? 2 : 1, reportedSkipped: !webEvicted });
});
