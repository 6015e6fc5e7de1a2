// A workflow started from a client, on the stack's Temporal dev server, runs an activity that
// reads the real cluster.
import { createKube } from '../../kube/client.js';
import { ensureFakeNodeGroup } from '../../stack/kwok/nodes.js';
import { connectClient } from '../../starter/client.js';
import { runInventory } from '../../starter/inventory.js';
import { temporalSettings } from '../../shared/temporal.js';
import { createWorker } from '../../worker/worker.js';
import { ALL_SEARCH_ATTRIBUTES } from '../../workflows/search-attributes.js';
import { uniqueName } from '../support/cluster.js';
import { mergePatch } from '../../kube/patch.js';

const kube = createKube();
const group = 'it-inventory';

test('the inventory workflow reports the nodes of a group, their readiness and cordons, read by an activity', async () => {
  const names = await ensureFakeNodeGroup(kube.core, group, 3);
  await kube.core.patchNode(
    { name: names[0]!, body: { spec: { unschedulable: true } } },
    mergePatch,
  );
  const settings = { ...temporalSettings(), taskQueue: uniqueName('it-inventory') };
  const { worker, connection } = await createWorker({ deps: { kube }, settings });
  const client = await connectClient(settings);
  try {
    const workflowId = uniqueName('it-inventory');
    const result = await worker.runUntil(runInventory(client, settings.taskQueue, workflowId, `slipway.dev/node-group=${group}`));
    expect(result.nodes.map((n) => n.name)).toEqual(names);
    expect(result.groups).toEqual({ [group]: { total: 3, ready: 3, cordoned: 1 } });
    // The activity really ran as an activity (not inline): the history has its completion.
    const history = await client.workflow.getHandle(workflowId).fetchHistory();
    const completed = history.events?.filter((e) => e.activityTaskCompletedEventAttributes) ?? [];
    expect(completed).toHaveLength(1);
  } finally {
    await kube.core.patchNode({ name: names[0]!, body: { spec: { unschedulable: null } } }, mergePatch);
    await client.connection.close();
    await connection.close();
  }
});

test('the dev server has every search attribute the workflows use', async () => {
  const client = await connectClient();
  try {
    const res = await client.connection.operatorService.listSearchAttributes({ namespace: temporalSettings().namespace });
    for (const key of ALL_SEARCH_ATTRIBUTES) {
      expect(Object.keys(res.customAttributes ?? {})).toContain(key.name);
    }
  } finally {
    await client.connection.close();
  }
});

