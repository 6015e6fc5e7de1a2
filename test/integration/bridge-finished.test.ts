// A finished request on the local stack, through the bridge and a real worker: the bridge never
// creates objects for it again (a CycleNodeStatus deleted by hand or by garbage collection stays
// gone), and deleting its namespace lets the namespace go, although creating anything in a
// terminating namespace is refused (403).
import { writeFileSync } from 'node:fs';
import { apiStatus } from '../../kube/client.js';
import { CYCLE_NODE_REQUEST, CYCLE_NODE_STATUS } from '../../api/cycle-node-request.js';
import { BridgeFixture, recordingKube } from '../support/bridge.js';
import { createNamespace, uniqueName } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';
import { CYCLE_FINALIZER } from '../../api/cycle-node-request.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

const f = new BridgeFixture('it-bridge-fin');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(() => f.setup());
afterAll(async () => {
  writeFileSync(`/tmp/${f.ns}.log`, f.dumpLogs());
  await f.teardown();
});

test('a finished 4-node request creates nothing more, and deleting its namespace removes the finalizer: the namespace is gone within 60 s', async () => {
  await f.cycleWorker('it-bridge-fin', 4, async ({ group, taskQueue }) => {
    // The request lives in a namespace of its own; the bridge's lease stays in the fixture's.
    const ns = uniqueName('it-bridge-fin-req');
    await createNamespace(f.c, ns);
    const kube = recordingKube();
    try {
      await f.bridge({ kube, taskQueue, namespace: ns, leaseName: uniqueName('lease') });
      const name = 'cycle';
      await f.createCnr(name, { nodeGroupName: group, provider: 'kwok', selector: { matchLabels: { [NODE_GROUP_LABEL]: group } }, cycleSettings: { concurrency: 2 } }, ns);
      const done = await waitFor('the request Successful', async () => {
        const o = await f.getCnr(name, ns);
        return o?.status?.phase === 'Successful' && o;
      }, { timeoutMs: 180_000, intervalMs: 250 });
      expect(done.status!.nodesCycled).toBe(4);
      const statuses = await waitFor('4 CycleNodeStatus Successful', async () => {
        const l = await f.nodeStatuses(ns);
        return l.length === 4 && l.every((s) => s.status?.phase === 'Successful') && l;
      });
      const finishedAt = Date.now();
      const creates = () => kube.calls.filter((c) => c.method === 'POST' && c.path.endsWith(`/namespaces/${ns}/${CYCLE_NODE_STATUS.plural}`) && c.at >= finishedAt);

      // One CycleNodeStatus deleted by hand: the finished request does not bring it back.
      const { group: g, version, plural } = CYCLE_NODE_STATUS;
      const removed = statuses[0]!.metadata.name;
      await f.custom.deleteNamespacedCustomObject({ group: g, version, plural, namespace: ns, name: removed });
      await sleep(3000);
      const recreated = (await f.nodeStatuses(ns)).some((s) => s.metadata.name === removed);

      // The whole namespace: the namespace controller deletes the CycleNodeStatuses and marks the
      // request deleted; the bridge must drop its finalizer without writing anything new.
      await f.c.core.deleteNamespace({ name: ns });
      const t = Date.now();
      const namespaceGone = await waitFor('namespace gone', async () => {
        try {
          await f.c.core.readNamespace({ name: ns });
          return false;
        } catch (err) {
          if (apiStatus(err) === 404) return true;
          throw err;
        }
      }, { timeoutMs: 60_000, intervalMs: 250 }).catch(() => false);
      f.logs.push(`namespace ${ns} ${namespaceGone ? `gone ${Date.now() - t} ms after its deletion` : 'still there after 60 s'}`);
      const failedReconciles = f.logs.filter((l) => l.includes(`${ns}/${name}: reconcile failed`));
      expect({ recreated, namespaceGone, creates: creates(), failedReconciles: failedReconciles.slice(0, 3) }).toEqual({ recreated: false, namespaceGone: true, creates: [], failedReconciles: [] });
    } finally {
      // Before the fix the namespace stays Terminating: let it go.
      const { group: g, version, plural } = CYCLE_NODE_REQUEST;
      const l = (await f.custom.listNamespacedCustomObject({ group: g, version, plural, namespace: ns }).catch(() => ({ items: [] }))) as { items: Array<{ metadata: { name: string; finalizers?: string[] } }> };
      for (const o of l.items) {
        if (o.metadata.finalizers?.includes(CYCLE_FINALIZER)) await f.patchCnr(o.metadata.name, { metadata: { finalizers: null } }, ns).catch(() => undefined);
      }
      await f.c.core.deleteNamespace({ name: ns }).catch(() => undefined);
    }
  });
}, 300_000);
