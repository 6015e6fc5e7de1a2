// A cycle whose drain a PDB blocks, on the local stack through the bridge and a real worker: what
// blocks it shows where `kubectl describe cnr` looks (the node's entry in status.nodes, the Ready
// condition, one Warning Event), not only on the per-node CycleNodeStatus.
import { writeFileSync } from 'node:fs';
import { NODE_GROUP_LABEL } from '../../activities/inventory.js';
import type { CycleNodeRequestObject } from '../../starter/bridge/objects.js';
import { BridgeFixture } from '../support/bridge.js';
import { isRunning, readAudit } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';

const f = new BridgeFixture('it-bridge-blk');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cond = (o: CycleNodeRequestObject, type: string) => o.status?.conditions?.find((c) => c.type === type);

beforeAll(() => f.setup());
afterAll(async () => {
  writeFileSync(`/tmp/${f.ns}.log`, f.dumpLogs());
  await f.teardown();
});

/** One `web` pod on the group's node, guarded by PDB `web-guard` that never lets it go. */
async function guardedWeb(group: string): Promise<string> {
  await f.c.apps.createNamespacedDeployment({
    namespace: f.ns,
    body: {
      metadata: { name: 'web' },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { nodeSelector: { [NODE_GROUP_LABEL]: group }, terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: 'registry.invalid/web:1' }] },
        },
      },
    },
  });
  await f.c.policy.createNamespacedPodDisruptionBudget({ namespace: f.ns, body: { metadata: { name: 'web-guard' }, spec: { minAvailable: 1, selector: { matchLabels: { app: 'web' } } } } });
  const pod = await waitFor('the web pod Running', async () => (await f.c.core.listNamespacedPod({ namespace: f.ns, labelSelector: 'app=web' })).items.find(isRunning));
  return pod.metadata!.name!;
}

test('the node entry and Ready name the blocking pod and PDB, and one DrainBlocked Event is recorded, not one per retry', async () => {
  await f.cycleWorker('it-bridge-blk', 1, async ({ group, taskQueue, old }) => {
    const pod = await guardedWeb(group);
    const podKey = `${f.ns}/${pod}`;
    await f.bridge({ taskQueue });
    const startedAt = new Date();
    const name = 'cycle';
    await f.createCnr(name, { nodeGroupName: group, provider: 'kwok', selector: { matchLabels: { [NODE_GROUP_LABEL]: group } }, cycleSettings: { concurrency: 1 } });

    // status.nodes[]: the node's entry carries its drain message.
    const blocked = await waitFor('the node entry naming the pod and the PDB', async () => {
      const o = await f.getCnr(name);
      const n = o?.status?.nodes?.find((x) => x.name === old[0]);
      return n?.phase === 'DrainingPods' && n.message?.includes(podKey) && n.message.includes('web-guard') && o;
    }, { timeoutMs: 90_000, intervalMs: 250 });
    f.logs.push(`blocked status: ${JSON.stringify(blocked.status, null, 1)}`);
    // Ready, in Cluster API's shape: the request's message, then the node and its drain's lines.
    const ready = cond(blocked, 'Ready')!;
    expect(ready.status).toBe('Unknown');
    expect(ready.message.split('\n')[0]).toBe(blocked.status!.message);
    expect(ready.message).toContain(`* Node ${old[0]}: Drain not completed yet`);
    expect(ready.message).toMatch(new RegExp(`\\n  \\* Pods? ${podKey.replace(/[.-]/g, '\\$&')}: .*web-guard`));

    // The eviction keeps being refused (429) and retried; the Event is recorded once.
    const refusals = await waitFor('3 refused evictions of the pod', async () => {
      const n = (await readAudit()).filter(
        (e) => e.objectRef?.subresource === 'eviction' && e.objectRef.name === pod && e.responseStatus?.code === 429 && new Date(e.requestReceivedTimestamp) >= startedAt,
      ).length;
      return n >= 3 && n;
    }, { timeoutMs: 60_000, intervalMs: 500 });
    await sleep(3000);
    const events = (await f.events(name)).filter((e) => e.reason === 'DrainBlocked');
    f.logs.push(`${refusals} refused evictions; DrainBlocked events: ${JSON.stringify(events.map((e) => [e.type, e.count, e.message]))}`);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ type: 'Warning', count: 1 });
    expect(events[0]!.message).toContain(old[0]);
    expect(events[0]!.message).toContain(podKey);
    expect(events[0]!.message).toContain('web-guard');

    // Deleting the request cancels the cycle, which heals the node; the object then goes.
    await f.deleteCnr(name);
    await waitFor('request gone', async () => (await f.getCnr(name)) === undefined, { timeoutMs: 60_000 });
  });
}, 240_000);
