// A cycle whose drain a PDB blocks, on the local stack through the bridge and a real worker: what
// blocks it shows where `kubectl describe cnr` looks (the node's entry in status.nodes, the Ready
// condition, one Warning Event), not only on the per-node CycleNodeStatus.
import { writeFileSync } from 'node:fs';
import type { CycleNodeRequestObject } from '../../starter/bridge/cycle/objects.js';
import { BridgeFixture } from '../support/bridge.js';
import { isRunning, readAudit } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';
import { ApiextensionsV1Api } from '@kubernetes/client-node';
import { GROUP } from '../../api/crd.js';
import { NODE_MAINTENANCE } from '../../api/node-maintenance.js';
import { ensureFakeNodeGroup } from '../../stack/kwok/nodes.js';
import { maintenanceDrainWorkflowId, maintenanceNodeWorkflowId, maintenanceWorkflowId } from '../../workflows/ids.js';
import { Maintenances } from '../support/bridge-maintenance.js';
import { deleteGroupNodes, uniqueName } from '../support/cluster.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

const f = new BridgeFixture('it-bridge-blk');
const nm = new Maintenances(f);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const cond = (o: CycleNodeRequestObject, type: string) => o.status?.conditions?.find((c) => c.type === type);

beforeAll(() => f.setup());
afterAll(async () => {
  writeFileSync(`/tmp/${f.ns}.log`, f.dumpLogs());
  await f.teardown();
});

/** One `web` pod on the group's node, guarded by PDB `web-guard` that never lets it go. */
async function guardedWeb(group: string, app = 'web'): Promise<string> {
  await f.c.apps.createNamespacedDeployment({
    namespace: f.ns,
    body: {
      metadata: { name: app },
      spec: {
        replicas: 1,
        selector: { matchLabels: { app } },
        template: {
          metadata: { labels: { app } },
          spec: { nodeSelector: { [NODE_GROUP_LABEL]: group }, terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: 'registry.invalid/web:1' }] },
        },
      },
    },
  });
  await f.c.policy.createNamespacedPodDisruptionBudget({ namespace: f.ns, body: { metadata: { name: `${app}-guard` }, spec: { minAvailable: 1, selector: { matchLabels: { app } } } } });
  const pod = await waitFor(`the ${app} pod Running`, async () => (await f.c.core.listNamespacedPod({ namespace: f.ns, labelSelector: `app=${app}` })).items.find(isRunning));
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

test('#24.6 a maintenance stuck in Drain names the blocking pod and PDB in its message and Drained condition, records one DrainBlocked Warning, and shows the blocked count in its Blocked printer column', async () => {
  await f.cycleWorker('it-nm-blk', 1, async ({ group, taskQueue, old }) => {
    const bystanders = `${group}-by`;
    await ensureFakeNodeGroup(f.c.core, bystanders, 1); // not every node of the cluster (NM-4.8)
    try {
      const pod = await guardedWeb(group, 'shop');
      const podKey = `${f.ns}/${pod}`;
      await f.bridge({ taskQueue, maintenances: true, queryIntervalMs: 200 });
      const startedAt = new Date();
      const name = uniqueName('nm-blk');
      const created = await nm.create(name, { nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [{ key: NODE_GROUP_LABEL, operator: 'In', values: [group] }] }] }, stage: 'Drain' });
      for (const id of [maintenanceWorkflowId(created.metadata), maintenanceNodeWorkflowId(old[0]!), maintenanceDrainWorkflowId(old[0]!)]) f.track(id);

      // The one-line message (what `kubectl get`/`describe` show first) names the pod and the PDB.
      const blocked = await waitFor('the message naming the pod and the PDB', async () => {
        const o = await nm.get(name);
        const m = o?.status?.message ?? '';
        return m.startsWith('Drain: ') && m.includes(podKey) && m.includes('shop-guard') && o;
      }, { timeoutMs: 90_000, intervalMs: 250 });
      f.logs.push(`blocked maintenance status: ${JSON.stringify(blocked.status, null, 1)}`);
      expect(blocked.status!.message).not.toContain('\n');
      const drained = blocked.status!.conditions!.find((c) => c.type === 'Drained')!;
      expect(drained).toMatchObject({ status: 'False', reason: 'DrainBlocked' });
      expect(drained.message).toContain(`* Node ${old[0]}: `);
      expect(drained.message).toMatch(new RegExp(`\\n  \\* Pods? ${podKey.replace(/[.-]/g, '\\$&')}: .*shop-guard`));

      // Blocked column: the CRD prints drainStatus.podsBlocked, which counts the pod.
      const crd = await f.c.config.makeApiClient(ApiextensionsV1Api).readCustomResourceDefinition({ name: `${NODE_MAINTENANCE.plural}.${GROUP}` });
      const columns = crd.spec.versions.find((v) => v.served)!.additionalPrinterColumns ?? [];
      expect(columns).toContainEqual(expect.objectContaining({ name: 'Blocked', type: 'integer', jsonPath: '.status.drainStatus.podsBlocked' }));
      const counted = await waitFor('drainStatus.podsBlocked', async () => {
        const o = await nm.get(name);
        return (o?.status?.drainStatus?.podsBlocked ?? 0) > 0 && o;
      }, { timeoutMs: 30_000, intervalMs: 250 });
      expect(counted.status!.drainStatus!.podsBlocked).toBe(1);

      // The eviction keeps being refused and retried, the status keeps being mirrored: one Event.
      await waitFor('3 refused evictions of the pod', async () => {
        const n = (await readAudit()).filter(
          (e) => e.objectRef?.subresource === 'eviction' && e.objectRef.name === pod && e.responseStatus?.code === 429 && new Date(e.requestReceivedTimestamp) >= startedAt,
        ).length;
        return n >= 3;
      }, { timeoutMs: 60_000, intervalMs: 500 });
      await sleep(3000);
      const events = (await nm.events(name, created.metadata.uid)).filter((e) => e.reason === 'DrainBlocked');
      f.logs.push(`maintenance DrainBlocked events: ${JSON.stringify(events.map((e) => [e.type, e.count, e.message]))}`);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ type: 'Warning', count: 1 });
      expect(events[0]!.message).toContain(old[0]);
      expect(events[0]!.message).toContain(podKey);
      expect(events[0]!.message).toContain('shop-guard');
    } finally {
      await nm.cleanup();
      await deleteGroupNodes(f.c, bystanders);
    }
  });
}, 240_000);
