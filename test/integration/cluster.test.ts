// The local control plane behaves like a real cluster: controllers create pods, kwok runs them,
// the disruption controller computes PDB status so evictions answer 429, deletions honour the
// grace period, and the audit log records evictions.
import type { V1Pod } from '@kubernetes/client-node';
import { apiStatus } from '../../kube/client.js';
import { ensureFakeNodeGroup } from '../../stack/kwok/nodes.js';
import { byControlPlane, createNamespace, isRunning, schedulerSeesCordon, readAudit, testCluster, uniqueName } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';
import { mergePatch } from '../../kube/patch.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

const c = testCluster();
const ns = uniqueName('it-cluster');
const group = 'it-cluster';
const GRACE = 3;

async function appPods(): Promise<V1Pod[]> {
  return (await c.core.listNamespacedPod({ namespace: ns, labelSelector: 'app=web' })).items;
}

async function pdbAllows(disruptionsAllowed: number, currentHealthy: number) {
  const pdb = await c.policy.readNamespacedPodDisruptionBudget({ name: 'web', namespace: ns });
  const s = pdb.status;
  return s?.observedGeneration === pdb.metadata?.generation && s?.disruptionsAllowed === disruptionsAllowed && s?.currentHealthy === currentHealthy;
}

async function evict(pod: V1Pod) {
  const { name, namespace } = pod.metadata!;
  return c.core.createNamespacedPodEviction({ name: name!, namespace: namespace!, body: { metadata: { name, namespace } } });
}

beforeAll(async () => {
  await ensureFakeNodeGroup(c.core, group, 4);
  // A cordon left by an earlier failed run must not skew scheduling.
  for (let i = 0; i < 4; i++) await c.core.patchNode({ name: `${group}-${i}`, body: { spec: { unschedulable: null } } }, mergePatch);
  await createNamespace(c, ns);
});

afterAll(async () => {
  for (let i = 0; i < 4; i++) await c.core.patchNode({ name: `${group}-${i}`, body: { spec: { unschedulable: null } } }, mergePatch);
  await c.core.deleteNamespace({ name: ns });
});

test('a Deployment with 3 replicas gets 3 Running pods on kwok nodes', async () => {
  await c.apps.createNamespacedDeployment({
    namespace: ns,
    body: {
      metadata: { name: 'web' },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: {
            nodeSelector: { [NODE_GROUP_LABEL]: group },
            terminationGracePeriodSeconds: GRACE,
            containers: [{ name: 'web', image: 'registry.invalid/web:1' }],
          },
        },
      },
    },
  });
  const pods = await waitFor('3 Running pods', async () => {
    const p = (await appPods()).filter(isRunning);
    return p.length === 3 && p;
  });
  const nodes = await c.core.listNode({ labelSelector: `${NODE_GROUP_LABEL}=${group}` });
  const kwokNodes = new Set(nodes.items.filter((n) => n.metadata?.annotations?.['kwok.x-k8s.io/node'] === 'fake').map((n) => n.metadata!.name));
  for (const p of pods) {
    expect(kwokNodes.has(p.spec!.nodeName!)).toBe(true);
    expect(p.status?.conditions?.find((x) => x.type === 'Ready')?.status).toBe('True');
  }
});

test('with a PDB at minAvailable 3 an eviction answers 429 with the budget message', async () => {
  await c.policy.createNamespacedPodDisruptionBudget({
    namespace: ns,
    body: { metadata: { name: 'web' }, spec: { minAvailable: 3, selector: { matchLabels: { app: 'web' } } } },
  });
  await waitFor('PDB status computed (0 disruptions allowed)', () => pdbAllows(0, 3));
  const [victim] = (await appPods()).filter(isRunning);
  const err = await evict(victim!).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(apiStatus(err)).toBe(429);
  expect(String((err as { body?: unknown }).body)).toContain("Cannot evict pod as it would violate the pod's disruption budget");
  expect((await c.core.readNamespacedPod({ name: victim!.metadata!.name!, namespace: ns })).metadata?.deletionTimestamp).toBeUndefined();
});

test('at minAvailable 2 the eviction succeeds, the pod leaves at its grace deadline, and is replaced on another node; the audit log records it', async () => {
  await c.policy.patchNamespacedPodDisruptionBudget({ name: 'web', namespace: ns, body: { spec: { minAvailable: 2 } } }, mergePatch);
  await waitFor('PDB allows 1 disruption', () => pdbAllows(1, 3));
  const before = (await appPods()).filter(isRunning);
  const [victim] = before;
  const name = victim!.metadata!.name!;
  const node = victim!.spec!.nodeName!;
  // The scheduler spreads softly, so another pod may share the victim's node; it stays.
  const neighbours = before.filter((p) => p.spec!.nodeName === node && p.metadata!.name !== name).map((p) => p.metadata!.name);
  // Cordon the victim's node, as a drain would, so the replacement must land elsewhere.
  await c.core.patchNode({ name: node, body: { spec: { unschedulable: true } } }, mergePatch);
  await schedulerSeesCordon(c, ns, node);

  const evictedAt = Date.now();
  await evict(victim!);
  const terminating = await c.core.readNamespacedPod({ name, namespace: ns });
  expect(terminating.metadata?.deletionTimestamp).toBeDefined();
  await waitFor(`${name} to disappear`, async () => {
    try {
      await c.core.readNamespacedPod({ name, namespace: ns });
      return false;
    } catch (err) {
      return apiStatus(err) === 404;
    }
  }, { intervalMs: 100 });
  const goneAfterMs = Date.now() - evictedAt;
  expect(goneAfterMs).toBeGreaterThanOrEqual(GRACE * 1000 - 1000); // deletionTimestamp has 1 s resolution
  expect(goneAfterMs).toBeLessThan(GRACE * 1000 + 10_000);

  const replacements = await waitFor('3 Running pods again', async () => {
    const p = (await appPods()).filter(isRunning);
    return p.length === 3 && p;
  });
  expect(replacements.map((p) => p.metadata!.name)).not.toContain(name);
  // The ReplicaSet made a new pod after the eviction, and it is not on the cordoned node.
  const newcomer = replacements.find((p) => new Date(p.metadata!.creationTimestamp!).getTime() >= evictedAt - 1000);
  expect(newcomer).toBeDefined();
  expect(newcomer!.spec!.nodeName).not.toBe(node);
  expect(replacements.filter((p) => p.spec!.nodeName === node).map((p) => p.metadata!.name).sort()).toEqual(neighbours.sort());

  const audit = await readAudit();
  const evictions = audit.filter((e) => e.objectRef?.subresource === 'eviction' && e.objectRef?.namespace === ns && e.objectRef?.name === name);
  expect(evictions.map((e) => e.responseStatus?.code)).toContain(201);
  const nodeCordon = audit.filter((e) => e.objectRef?.resource === 'nodes' && e.objectRef?.name === node && e.verb === 'patch' && !byControlPlane(e));
  expect(nodeCordon.length).toBeGreaterThan(0);
});
