// A NodeDisruptionBudget's status between its holders' writes (starter/bridge/budget/): the bridge
// writes it when the budget is created (the limit in force, Valid), keeps the limit current at each
// resync (nodes added to the selection), repairs a leaked ledger entry with no holder writing, and
// reports a stored spec zod refuses (a backwards cron range CEL cannot see) with Valid False and a
// Warning Event, once.
import { ensureFakeNodeGroup } from '../../stack/kwok/nodes.js';
import { GROUP, VERSION } from '../../api/crd.js';
import { NODE_DISRUPTION_BUDGET, type NodeDisruptionBudgetSpecInput, type NodeDisruptionBudgetStatus } from '../../api/node-disruption-budget.js';
import { BridgeFixture } from '../support/bridge.js';
import { deleteGroupNodes, uniqueName } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';
import { mergePatch } from '../../kube/patch.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

const f = new BridgeFixture('it-nb-status');
const where = { group: GROUP, version: VERSION, plural: NODE_DISRUPTION_BUDGET.plural };
const group = uniqueName('it-nb-st');
const budgets: string[] = [];
let nodes: string[] = [];

beforeAll(async () => {
  await f.setup();
  nodes = await ensureFakeNodeGroup(f.c.core, group, 3);
  await f.bridge({ budgets: true, resyncIntervalMs: 2_000 });
}, 90_000);
afterAll(async () => {
  await f.stopBridges();
  for (const name of budgets) await f.custom.deleteClusterCustomObject({ ...where, name }).catch(() => undefined);
  await deleteGroupNodes(f.c, group);
  await f.teardown();
}, 90_000);

async function budget(spec: Omit<NodeDisruptionBudgetSpecInput, 'nodeSelector'>): Promise<string> {
  const name = uniqueName('it-nb-st');
  budgets.push(name);
  await f.custom.createClusterCustomObject({ ...where, body: { apiVersion: `${GROUP}/${VERSION}`, kind: NODE_DISRUPTION_BUDGET.kind, metadata: { name }, spec: { nodeSelector: { matchLabels: { [NODE_GROUP_LABEL]: group } }, ...spec } } });
  return name;
}
const status = async (name: string) => ((await f.custom.getClusterCustomObject({ ...where, name })) as { status?: NodeDisruptionBudgetStatus }).status ?? {};
const statusWhen = (what: string, name: string, ok: (s: NodeDisruptionBudgetStatus) => boolean) =>
  waitFor(what, async () => {
    const s = await status(name);
    return ok(s) ? s : undefined;
  }, { timeoutMs: 30_000 });

test('a new budget gets its status at once; the limit follows the selection at resync; a leaked entry is dropped with no holder writing', async () => {
  const name = await budget({ maxDisrupted: '25%' });
  const created = Date.now();
  const first = await statusWhen('the first status', name, (s) => s.limit !== undefined);
  console.log(`budget status written ${((Date.now() - created) / 1000).toFixed(1)} s after creation`);
  expect(first).toMatchObject({ limit: { nodes: 1, selectedNodes: 3, reason: 'maxDisrupted 25%' }, disruptedNodes: 0, message: '0 of 1 nodes disrupted' });
  expect(first.conditions?.[0]).toMatchObject({ type: 'Valid', status: 'True' });

  // Two more nodes selected: 25% of 5 rounds up to 2, written at the next resync.
  nodes = await ensureFakeNodeGroup(f.c.core, group, 5);
  await statusWhen('the limit over 5 nodes', name, (s) => s.limit?.selectedNodes === 5 && s.limit.nodes === 2 && s.message === '0 of 2 nodes disrupted');

  // A slot whose holder is gone (its workflow never ran, or has closed) and that nobody will release.
  const o = (await f.custom.getClusterCustomObject({ ...where, name })) as { status?: NodeDisruptionBudgetStatus };
  const since = new Date(Date.now() - 120_000).toISOString();
  await f.custom.replaceClusterCustomObjectStatus({ ...where, name, body: { ...o, status: { ...o.status, disrupted: [{ node: nodes[0]!, holder: `cnr/${f.ns}/gone/00000000`, since }] } } });
  const repaired = await statusWhen('the leaked slot dropped', name, (s) => (s.disrupted ?? []).length === 0);
  expect(repaired).toMatchObject({ disruptedNodes: 0, message: '0 of 2 nodes disrupted' });
}, 120_000);

test('#25.2 the status says which generation it describes: observedGeneration follows a spec edit', async () => {
  const name = await budget({ maxDisrupted: 1 });
  await statusWhen('the first status, of generation 1', name, (s) => s.observedGeneration === 1 && s.limit?.nodes === 1);
  await f.custom.patchClusterCustomObject({ ...where, name, body: { spec: { maxDisrupted: 2 } } }, mergePatch);
  await statusWhen('the status of generation 2', name, (s) => s.observedGeneration === 2 && s.limit?.nodes === 2);
}, 60_000);

test('a stored spec zod refuses: Valid False naming the field, and one Warning Event', async () => {
  const name = await budget({ maxDisrupted: 5, schedules: [{ schedule: '0 17-9 * * *', duration: '1h', maxDisrupted: 1 }] });
  const st = await statusWhen('Valid False', name, (s) => s.conditions?.[0]?.status === 'False');
  expect(st.conditions?.[0]).toMatchObject({ type: 'Valid', reason: 'InvalidSpec', message: expect.stringContaining('"0 17-9 * * *": range 17-9 goes backwards') });
  expect(st.message).toContain('invalid: ');
  const events = await waitFor('the Warning Event', async () => {
    const e = (await f.events(name, 'default')).filter((x) => x.reason === 'InvalidSpec');
    return e.length ? e : undefined;
  }, { timeoutMs: 30_000 });
  expect(events[0]).toMatchObject({ type: 'Warning', involvedObject: { kind: NODE_DISRUPTION_BUDGET.kind, name } });
  // Resyncs do not repeat it.
  await new Promise((r) => setTimeout(r, 5_000));
  expect((await f.events(name, 'default')).filter((x) => x.reason === 'InvalidSpec')).toHaveLength(1);
}, 90_000);
