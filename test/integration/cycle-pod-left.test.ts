// #24.2 and #24.3 on the local stack: a cycle whose node keeps getting a pod back (its Deployment's
// pods tolerate the cordon and only that node matches their nodeSelector) deletes the node with the
// pod on it. Whoever reads the CycleNodeRequest learns of it: the node's entry in status.nodes[],
// its CycleNodeStatus, and a Warning Event PodLeftOnNode on the request, all naming the pod; the
// "evicted N times" in the reason is the number of evictions the audit log shows for those pods.
import { uniqueName, readAudit } from '../support/cluster.js';
import { BridgeFixture } from '../support/bridge.js';
import { evictionsOf } from '../support/drain.js';
import { mergePatch } from '../../kube/patch.js';
import { waitFor } from '../support/wait.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

const f = new BridgeFixture('it-pod-left');
beforeAll(() => f.setup());
afterAll(() => f.teardown());

const STICKY_LABEL = 'slipway.test/sticky';

test('#24.2 #24.3 a pod that keeps coming back is named on the request when its node is cycled: status.nodes[], CycleNodeStatus, a Warning Event PodLeftOnNode; its evictions counted as the audit log shows them', async () => {
  await f.cycleWorker('it-pod-left', 1, async ({ group, taskQueue, old }) => {
    const node = old[0]!;
    const startedAt = new Date();
    // Only the old node has the label: each replacement pod is scheduled straight back onto it (cordoned, but tolerated).
    await f.c.core.patchNode({ name: node, body: { metadata: { labels: { [STICKY_LABEL]: f.ns } } } }, mergePatch);
    await f.c.apps.createNamespacedDeployment({
      namespace: f.ns,
      body: {
        metadata: { name: 'sticky' },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'sticky' } },
          template: {
            metadata: { labels: { app: 'sticky' } },
            spec: {
              // Not the group label: a cycle detaches its nodes from the group (the label goes) before draining them.
              nodeSelector: { [STICKY_LABEL]: f.ns },
              tolerations: [{ operator: 'Exists' }],
              terminationGracePeriodSeconds: 1,
              containers: [{ name: 'c', image: 'registry.invalid/app:1' }],
            },
          },
        },
      },
    });
    await waitFor('the sticky pod Running', async () => (await f.c.core.listNamespacedPod({ namespace: f.ns, labelSelector: 'app=sticky' })).items.some((p) => p.status?.phase === 'Running'));
    await f.bridge({ taskQueue });
    const name = uniqueName('cnr');
    await f.createCnr(name, { nodeGroupName: group, provider: 'kwok', selector: { matchLabels: { [NODE_GROUP_LABEL]: group } } });
    const done = await waitFor(
      'request Successful',
      async () => {
        const o = await f.getCnr(name);
        if (o?.status?.phase === 'Failed') throw new Error(`request failed: ${o.status.message}`);
        return o?.status?.phase === 'Successful' && o.status.completedAt ? o : undefined;
      },
      { timeoutMs: 180_000, intervalMs: 250 },
    );
    const entry = done.status!.nodes!.find((n) => n.name === node)!;
    expect(entry.phase).toBe('Successful');
    const shape = new RegExp(`1 Pod left on the Node: (${f.ns}/sticky-\\S+) \\(returns after eviction: tolerates node.kubernetes.io/unschedulable \\(Pods of ReplicaSet ${f.ns}/sticky-\\S+ evicted (\\d+) times in this drain\\)\\)`);
    expect(entry.message).toMatch(shape);
    const left = entry.message!.match(shape);
    const [, pod, times] = left!;
    expect(done.status!.message).toContain(`1 Pod was left on a node when deleted, having come back after every eviction: ${node} (${pod})`);
    // The audit log: every eviction of the Deployment's pods that the apiserver accepted, the first and the returns.
    const evicted = evictionsOf(await readAudit()).filter(
      (e) => new Date(e.requestReceivedTimestamp) >= startedAt && e.objectRef?.namespace === f.ns && e.objectRef.name?.startsWith('sticky-') && e.responseStatus?.code === 201,
    );
    expect(Number(times)).toBe(evicted.length);
    expect(evicted.length).toBe(4);
    const status = await waitFor('the CycleNodeStatus Successful', async () => (await f.nodeStatuses()).find((x) => x.spec?.requestName === name && x.status?.phase === 'Successful'));
    expect(status.status!.returning).toEqual([{ pod, reason: expect.stringContaining(`evicted ${times} times in this drain`) }]);
    const events = await waitFor('the PodLeftOnNode Event', async () => {
      const ev = (await f.events(name)).filter((e) => e.reason === 'PodLeftOnNode');
      return ev.length ? ev : undefined;
    });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'Warning', involvedObject: expect.objectContaining({ kind: 'CycleNodeRequest', name }) });
    expect(events[0]!.message).toMatch(new RegExp(`^Pod ${pod} was on node ${node} when the node was deleted: returns after eviction`));
  });
}, 240_000);
