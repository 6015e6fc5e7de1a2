// #28 found by the bridge-fleet benchmark: a list of custom resources answers its continue token as
// `metadata.continue` (raw JSON), a typed list as `metadata._continue`. listAllPages read only the
// second, so every reflector over a custom resource (the bridge's CycleNodeRequests, CycleNodeStatus
// objects, NodeMaintenances, budgets) stopped at its first page of 500: past that the bridge never
// saw the rest, re-created them (409) on every reconcile and never updated them.
import { CustomObjectsApi } from '@kubernetes/client-node';
import { API_VERSION } from '../../api/names.js';
import { CYCLE_NODE_STATUS, CYCLE_REQUEST_LABEL, CycleSettings } from '../../api/cycle-node-request.js';
import { listAllPages } from '../../kube/listwatch.js';
import { CycleObjects } from '../../starter/bridge/cycle/objects.js';
import { createNamespace, testCluster, uniqueName } from '../support/cluster.js';

const c = testCluster();
const custom = c.config.makeApiClient(CustomObjectsApi);
const ns = uniqueName('it-pages');
const COUNT = 25;

beforeAll(async () => {
  await createNamespace(c, ns);
  const { group, version, plural } = CYCLE_NODE_STATUS;
  const cycleSettings = CycleSettings.parse({});
  for (let i = 0; i < COUNT; i++) {
    const body = { apiVersion: API_VERSION, kind: 'CycleNodeStatus', metadata: { name: `r-n${i}`, labels: { [CYCLE_REQUEST_LABEL]: 'r' } }, spec: { nodeName: `n${i}`, requestName: 'r', cycleSettings } };
    await custom.createNamespacedCustomObject({ group, version, plural, namespace: ns, body });
  }
}, 60_000);
afterAll(() => c.core.deleteNamespace({ name: ns }).catch(() => undefined));

test('#28 listAllPages reads every page of a custom resource\'s list (the bridge\'s CycleNodeStatus list, 10 a page), as of a typed one', async () => {
  const objects = new CycleObjects(c.config, ns);
  const all = await listAllPages((p) => objects.listStatuses({ ...p, labelSelector: CYCLE_REQUEST_LABEL }), 10);
  expect(all.items.map((o) => o.metadata.name).sort()).toEqual(Array.from({ length: COUNT }, (_, i) => `r-n${i}`).sort());
  expect(all.resourceVersion).toMatch(/^\d+$/);
  // A typed list pages as before.
  for (let i = 0; i < 5; i++) await c.core.createNamespacedConfigMap({ namespace: ns, body: { metadata: { name: `cm${i}`, labels: { 'example.com/pages': 'yes' } } } });
  const maps = await listAllPages((p) => c.core.listNamespacedConfigMap({ namespace: ns, labelSelector: 'example.com/pages', ...p }), 2);
  expect(maps.items.map((m) => m.metadata!.name).sort()).toEqual(['cm0', 'cm1', 'cm2', 'cm3', 'cm4']);
});
