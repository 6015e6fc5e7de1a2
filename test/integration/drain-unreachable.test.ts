// An unreachable node, end to end (#14 §3; Cluster API's and Karpenter's behaviour): the node's fake
// kubelet stops (kwok lets it go) and its Ready condition turns Unknown, so its pods can never finish
// terminating. The drain evicts with a 1 s grace period instead of the pods' own, stops waiting for
// pods that have been terminating there for more than 5 s, does not wait for volumes, and says why.
import { DrainFixture, evictionsOf, mergePatch } from '../support/drain.js';
import { waitFor } from '../support/wait.js';

const KWOK_ANNOTATION = 'kwok.x-k8s.io/node';

describe('a drain of an unreachable node', () => {
  const f = new DrainFixture('it-unreach');
  beforeAll(() => f.setup());
  afterAll(() => f.teardown());

  test('evicts with a 1 s grace, skips the pods stuck terminating after 5 s, skips the volume wait, ends Drained within seconds, and says why', async () => {
    await f.deploy('db', 2, {}, 600); // a 10-minute grace period the drain must not wait for
    const pods = await f.waitRunning(2);
    // No kubelet will confirm their deletion: a finalizer stands in for it (kwok would finish them at their grace).
    const STUCK = `${f.group}.test/no-kubelet`;
    for (const p of pods) await f.c.core.patchNamespacedPod({ namespace: f.ns, name: p.metadata!.name!, body: { metadata: { finalizers: [STUCK] } } }, mergePatch);
    // The kubelet goes away: kwok stops managing the node, and its Ready condition is Unknown, as the
    // node lifecycle controller sets it once heartbeats stop (set here at once instead of after ~40 s).
    await f.c.core.patchNode({ name: f.node, body: { metadata: { annotations: { [KWOK_ANNOTATION]: null } } } }, mergePatch);
    const node = await f.c.core.readNode({ name: f.node });
    const conditions = (node.status?.conditions ?? []).map((c) => (c.type === 'Ready' ? { ...c, status: 'Unknown', reason: 'NodeStatusUnknown', message: 'Kubelet stopped posting node status.' } : c));
    await f.c.core.patchNodeStatus({ name: f.node, body: { status: { conditions } } }, mergePatch);
    await waitFor('Ready Unknown', async () => (await f.c.core.readNode({ name: f.node })).status?.conditions?.find((c) => c.type === 'Ready')?.status === 'Unknown');

    const started = Date.now();
    const handle = await f.startDrain();
    const result = await handle.result();
    const took = Date.now() - started;
    console.log(`unreachable node drained in ${(took / 1000).toFixed(1)} s`);

    expect(result.status.phase).toBe('Drained');
    expect(took).toBeGreaterThanOrEqual(5_000); // the stuck pods were waited for 5 s ...
    expect(took).toBeLessThan(60_000); // ... and then left: never the 600 s grace
    expect(evictionsOf(await f.audit()).filter((e) => e.responseStatus?.code === 201).map((e) => e.objectRef!.name).sort()).toEqual(pods.map((p) => p.metadata!.name).sort());
    // The pods took the short grace (1 s, or 0 once the grace ran out; never their 600 s) and are still
    // there, terminating: nothing confirms their deletion.
    for (const p of pods) {
      const now = await f.c.core.readNamespacedPod({ namespace: f.ns, name: p.metadata!.name! });
      expect(now.metadata?.deletionTimestamp).toBeDefined();
      expect(now.metadata?.deletionGracePeriodSeconds).toBeLessThanOrEqual(1);
    }
    expect(result.status.skipped.map((s) => s.reason)).toEqual(['terminating on an unreachable node', 'terminating on an unreachable node']);
    expect(result.status.volumes).toEqual({ message: `not waited for: node ${f.node} is unreachable`, timedOut: false });
    expect(result.status.message).toContain('2 Pods skipped (2 terminating on an unreachable node)');
    for (const p of pods) await f.c.core.patchNamespacedPod({ namespace: f.ns, name: p.metadata!.name!, body: { metadata: { finalizers: null } } }, mergePatch);
  }, 120_000);
});
