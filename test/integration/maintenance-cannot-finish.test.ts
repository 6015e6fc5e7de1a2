// #27.4 on the local stack, with the real worker and the bridge: 3 kwok nodes, a NodeDisruptionBudget
// of 1 over them (its one slot taken by a fourth node someone cordoned), a NodeMaintenance created
// in Drain without spec.rollout. It holds every node it cordons until Complete, so it can never
// finish: status says so (condition CannotFinish=True naming the budget) and one Warning Event
// CannotFinish is written, while not one of its nodes has been cordoned, let alone drained.
import { CustomObjectsApi } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../../api/crd.js';
import { NODE_DISRUPTION_BUDGET } from '../../api/node-disruption-budget.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';
import type { RunningBridge } from '../../starter/bridge/main.js';
import { ensureFakeNodeGroup } from '../../stack/kwok/nodes.js';
import { BridgeFixture } from '../support/bridge.js';
import { Maintenances } from '../support/bridge-maintenance.js';
import { deleteGroupNodes, uniqueName } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';
import { mergePatch } from '../../kube/patch.js';

const f = new BridgeFixture('it-nm-cf');
const nm = new Maintenances(f);
const custom = f.c.config.makeApiClient(CustomObjectsApi);
const where = { group: GROUP, version: VERSION, plural: NODE_DISRUPTION_BUDGET.plural };
const budgetName = uniqueName('it-nm-cf');
let group = '';
let nodes: string[] = [];
let bridge: RunningBridge;

beforeAll(async () => {
  await f.setup();
  group = f.ns;
  nodes = await ensureFakeNodeGroup(f.c.core, group, 4);
  await f.realWorker();
  bridge = await f.leadingBridge({ maintenances: true });
}, 120_000);
afterAll(async () => {
  await nm.cleanup();
  await custom.deleteClusterCustomObject({ ...where, name: budgetName }).catch(() => undefined);
  await f.stopBridges();
  await deleteGroupNodes(f.c, group);
  await f.teardown();
}, 120_000);

test('#27.4 3 nodes in Drain under a budget of 1, no rollout: CannotFinish in status and a Warning Event, before any node is cordoned', async () => {
  const [taken, ...mine] = nodes as [string, ...string[]];
  // The budget's one slot is taken by a node cordoned outside Slipway: the maintenance cannot start a drain at all.
  await f.c.core.patchNode({ name: taken, body: { spec: { unschedulable: true } } }, mergePatch);
  await custom.createClusterCustomObject({ ...where, body: { apiVersion: `${GROUP}/${VERSION}`, kind: NODE_DISRUPTION_BUDGET.kind, metadata: { name: budgetName }, spec: { nodeSelector: { matchLabels: { [NODE_GROUP_LABEL]: group } }, maxDisrupted: 1 } } });
  const name = uniqueName('it-nm-cf');
  await nm.create(name, { stage: 'Drain', nodeSelector: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: mine }] }] } });

  const message = `3 nodes selected; NodeDisruptionBudget ${budgetName} allows 1 at a time: this maintenance can finish only with spec.rollout`;
  const o = await waitFor(`${name}: CannotFinish`, async () => {
    const x = await nm.get(name);
    return x?.status?.conditions?.some((c) => c.type === 'CannotFinish' && c.status === 'True') ? x : undefined;
  }, { timeoutMs: 60_000, intervalMs: 200 });
  expect(o.status!.conditions!.find((c) => c.type === 'CannotFinish')).toMatchObject({ status: 'True', reason: 'BudgetTooSmall', message });
  expect(o.status!.conditions!.find((c) => c.type === 'Drained')?.status).not.toBe('True');
  const events = await waitFor(`${name}: the CannotFinish Event`, async () => {
    const e = (await nm.events(name)).filter((x) => x.reason === 'CannotFinish');
    return e.length ? e : undefined;
  }, { timeoutMs: 30_000 });
  expect(events.map((e) => [e.type, e.message, e.count ?? 1])).toEqual([['Warning', message, 1]]);
  // Nothing was waited for: none of the maintenance's nodes is cordoned (the budget has no slot for them).
  for (const n of mine) expect((await f.c.core.readNode({ name: n })).spec?.unschedulable).toBeFalsy();

  // Complete releases it; the Event is not written again on the way.
  await nm.patch(name, { spec: { stage: 'Complete' } });
  await waitFor(`${name}: completed`, async () => (await nm.get(name))?.status?.conditions?.some((c) => c.type === 'Ready' && c.reason === 'Completed'), { timeoutMs: 60_000 });
  expect((await nm.events(name)).filter((x) => x.reason === 'CannotFinish').map((e) => e.count ?? 1)).toEqual([1]);
  await f.c.core.patchNode({ name: taken, body: { spec: { unschedulable: false } } }, mergePatch);
}, 180_000);
