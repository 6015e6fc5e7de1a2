// An unreachable node, end to end (#14 §3; Cluster API's and Karpenter's behaviour): the node's fake
// kubelet stops (kwok lets it go) and its Ready condition turns Unknown, so its pods can never finish
// terminating. The drain evicts with a 1 s grace period instead of the pods' own, stops waiting for
// pods that have been terminating there for more than 5 s, does not wait for volumes, and says why.
// The same mid-cycle: the node's drain ends the same way and the node is deleted and its instance
// terminated, the status saying why.
import { ensureFakeNodeGroup } from '../../stack/kwok/nodes.js';
import { cycleStatusQuery } from '../../workflows/messages.js';
import { readAudit } from '../support/cluster.js';
import { killKubelet } from '../support/dead-kubelet.js';
import { CycleFixture } from '../support/cycle.js';
import { DrainFixture, evictionsOf } from '../support/drain.js';
import { mergePatch } from '../../kube/patch.js';
import { waitFor } from '../support/wait.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

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
    await killKubelet(f.c, f.node);

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

describe('a node that becomes unreachable mid-cycle', () => {
  const f = new CycleFixture('it-unreach-cycle');
  beforeAll(() => f.setup());
  afterAll(() => f.teardown());

  test('its drain evicts with the short grace, leaves the stuck pods, skips the volume wait; the node is deleted, its instance terminated, and the status says why', async () => {
    const old = await ensureFakeNodeGroup(f.c.core, f.group, 2);
    // One pod per node (required anti-affinity), with a 20 s grace: the reachable node's pod takes it;
    // the unreachable node's must get 1 s.
    await f.c.apps.createNamespacedDeployment({
      namespace: f.ns,
      body: {
        metadata: { name: 'db' },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: 'db' } },
          template: {
            metadata: { labels: { app: 'db' } },
            spec: {
              nodeSelector: { [NODE_GROUP_LABEL]: f.group },
              terminationGracePeriodSeconds: 20,
              affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'db' } } }] } },
              containers: [{ name: 'c', image: 'registry.invalid/db:1' }],
            },
          },
        },
      },
    });
    await waitFor('a db pod Running on each node', async () => {
      const on = new Set((await f.c.core.listNamespacedPod({ namespace: f.ns })).items.filter((p) => p.status?.phase === 'Running').map((p) => p.spec?.nodeName));
      return old.every((n) => on.has(n));
    });
    const startedAt = new Date();
    const handle = await f.start({ selector: { matchLabels: { [NODE_GROUP_LABEL]: f.group } }, cycleSettings: { concurrency: 1 } });
    // Once the first node is on its way, the other one's kubelet dies, its pods stuck as they would be.
    const first = await waitFor('the first node under way', async () => (await handle.query(cycleStatusQuery)).nodes.find((n) => n.phase !== 'Pending')?.nodeName, { intervalMs: 100 });
    const lost = old.find((n) => n !== first)!;
    const STUCK = `${f.group}.test/no-kubelet`;
    const stuck = (await f.c.core.listNamespacedPod({ namespace: f.ns, fieldSelector: `spec.nodeName=${lost}` })).items.map((p) => p.metadata!.name!);
    expect(stuck).toHaveLength(1); // the db pod on it (one per node)
    for (const name of stuck) await f.c.core.patchNamespacedPod({ namespace: f.ns, name, body: { metadata: { finalizers: [STUCK] } } }, mergePatch);
    await killKubelet(f.c, lost);
    try {
      const result = await Promise.race([
        handle.result(),
        new Promise<never>((_, reject) =>
          setTimeout(() => void handle.query(cycleStatusQuery).then((st) => reject(new Error(`not done in 120 s: ${JSON.stringify(st, null, 1)}`)), reject), 120_000),
        ),
      ]);
      expect(result.phase).toBe('Successful');
      const entry = result.nodes.find((n) => n.nodeName === lost)!;
      expect(entry.phase).toBe('Successful');
      expect(entry.message).toMatch(new RegExp(`^1 Pod evicted; 1 Pod skipped \\(1 terminating on an unreachable node: ${f.ns}/\\S+\\); volumes not waited for: node ${lost} is unreachable$`));
      // Evicted with the short grace, never their 20 s; the node deleted once (its instance: kwok's node is the instance).
      const audit = (await readAudit()).filter((e) => new Date(e.requestReceivedTimestamp) >= startedAt);
      expect(evictionsOf(audit).filter((e) => e.responseStatus?.code === 201 && stuck.includes(e.objectRef!.name!)).map((e) => e.objectRef!.name).sort()).toEqual([...stuck].sort());
      for (const name of stuck) {
        const p = await f.c.core.readNamespacedPod({ namespace: f.ns, name });
        expect(p.metadata?.deletionGracePeriodSeconds).toBeLessThanOrEqual(1);
      }
      const deleted = audit.filter((e) => e.objectRef?.resource === 'nodes' && e.verb === 'delete' && e.responseStatus?.code === 200 && e.objectRef.name === lost);
      expect(deleted).toHaveLength(1);
      await expect(f.c.core.readNode({ name: lost })).rejects.toThrow();
    } finally {
      for (const name of stuck) await f.c.core.patchNamespacedPod({ namespace: f.ns, name, body: { metadata: { finalizers: null } } }, mergePatch).catch(() => undefined);
    }
  }, 180_000);
});
