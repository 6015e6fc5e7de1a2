// Issue 15 on the local stack: a NodeDisruptionBudget over three kwok node groups. Three
// CycleNodeRequests (concurrency 2 each) contend under a budget of 2: judged from a watch on every
// Node, never more than 2 of the selected nodes are cordoned or being deleted at once, and all three
// finish. A freeze window (maxDisrupted 0, in force now for 1-2 minutes) holds a cycle with no node
// cordoned and the reason in its status, and the cycle proceeds once the window ends. Three cycles
// and a NodeMaintenance contend under a budget of 2: the maintenance's node coordinators wait naming
// the budget, and still never more than 2 nodes are disrupted at once; all four finish.
import { CustomObjectsApi, Watch, type V1Node } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../../api/crd.js';
import { NODE_DISRUPTION_BUDGET, type NodeDisruptionBudgetSpecInput, type NodeDisruptionBudgetStatus } from '../../api/node-disruption-budget.js';
import { DETACHED_FROM_GROUP } from '../../api/node-groups.js';
import { ensureFakeNodeGroup } from '../../stack/kwok/nodes.js';
import { cycleStatusQuery, setStageUpdate } from '../../workflows/messages.js';
import { deleteGroupNodes, uniqueName } from '../support/cluster.js';
import { CycleFixture } from '../support/cycle.js';
import { MaintenanceFixture } from '../support/maintenance.js';
import { waitFor } from '../support/wait.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

const f = new CycleFixture('it-nb-cycle');
const custom = f.c.config.makeApiClient(CustomObjectsApi);
const where = { group: GROUP, version: VERSION, plural: NODE_DISRUPTION_BUDGET.plural };
const budgets: string[] = [];
const groups: string[] = [];
const stops: AbortController[] = [];
const m = new MaintenanceFixture('it-nb-nm');

beforeAll(async () => {
  await f.setup();
  await m.setup(2); // two nodes of its own group (and a bystander), a worker on its own task queue
}, 60_000);
afterAll(async () => {
  for (const s of stops) s.abort();
  for (const name of budgets) await custom.deleteClusterCustomObject({ ...where, name }).catch(() => undefined);
  await m.teardown();
  await f.teardown();
  for (const g of groups) await deleteGroupNodes(f.c, g);
}, 120_000);

async function budget(spec: NodeDisruptionBudgetSpecInput): Promise<string> {
  const name = uniqueName('it-nb');
  budgets.push(name);
  await custom.createClusterCustomObject({ ...where, body: { apiVersion: `${GROUP}/${VERSION}`, kind: NODE_DISRUPTION_BUDGET.kind, metadata: { name }, spec } });
  return name;
}

/** Nodes of these groups that are disrupted (cordoned or being deleted), from a watch of every Node: the most at once, and the count now. */
async function watchDisrupted(inGroups: string[]): Promise<{ most: () => number; now: () => number }> {
  const disrupted = new Set<string>();
  let most = 0;
  const list = await f.c.core.listNode();
  const see = (type: string, n: V1Node) => {
    const name = n.metadata!.name!;
    // A detached kwok node leaves its group's label for the detached-from annotation (the budget's ledger keeps counting it).
    const selected = inGroups.includes(n.metadata?.labels?.[NODE_GROUP_LABEL] ?? n.metadata?.annotations?.[DETACHED_FROM_GROUP] ?? '');
    if (type !== 'DELETED' && selected && (n.spec?.unschedulable || n.metadata?.deletionTimestamp)) disrupted.add(name);
    else disrupted.delete(name);
    most = Math.max(most, disrupted.size);
  };
  for (const n of list.items) see('ADDED', n);
  const stop = await new Watch(f.c.config).watch('/api/v1/nodes', { resourceVersion: list.metadata?.resourceVersion }, see, () => undefined);
  stops.push(stop);
  return { most: () => most, now: () => disrupted.size };
}

test('three cycles under a budget of 2: never more than 2 of its nodes disrupted at once, each waits saying why, all finish', async () => {
  const gs = [uniqueName('it-nb-a'), uniqueName('it-nb-b'), uniqueName('it-nb-c')];
  groups.push(...gs);
  await Promise.all(gs.map((g) => ensureFakeNodeGroup(f.c.core, g, 2)));
  const name = await budget({ nodeSelector: { matchExpressions: [{ key: NODE_GROUP_LABEL, operator: 'In', values: gs }] }, maxDisrupted: 2 });
  const watch = await watchDisrupted(gs);
  const handles = await Promise.all(gs.map((g, i) => f.start({ nodeGroupName: g, selector: { matchLabels: { [NODE_GROUP_LABEL]: g } }, cycleSettings: { concurrency: 2 } }, `cnr-${i}`)));
  // Someone waits, naming the budget (six nodes wanted at once, two slots).
  const reasons = new Set<string>();
  let done = false;
  const polling = (async () => {
    while (!done) {
      for (const h of handles) {
        const s = await h.query(cycleStatusQuery).catch(() => undefined);
        if (s?.message.startsWith('waiting for NodeDisruptionBudget')) reasons.add(s.message.replace(/, \d+ waiting ahead$/, ''));
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  const results = await Promise.all(handles.map((h) => h.result()));
  done = true;
  await polling;
  expect(results.map((r) => [r.phase, r.nodesCycled])).toEqual([['Successful', 2], ['Successful', 2], ['Successful', 2]]);
  expect(watch.most()).toBeLessThanOrEqual(2);
  expect(watch.most()).toBe(2); // the budget was used, not just never reached
  expect([...reasons]).toContain(`waiting for NodeDisruptionBudget ${name}: 2 of 2 nodes disrupted`);
  // The ledger is empty again: every slot was given back.
  const st = ((await custom.getClusterCustomObject({ ...where, name })) as { status?: NodeDisruptionBudgetStatus }).status;
  expect(st?.disrupted ?? []).toEqual([]);
  process.stdout.write(`most nodes disrupted at once under a budget of 2: ${watch.most()}\n`);
}, 240_000);

test('a freeze window in force holds a cycle (nothing cordoned, status says why) until the window ends, then it proceeds', async () => {
  const g = uniqueName('it-nb-freeze');
  groups.push(g);
  await ensureFakeNodeGroup(f.c.core, g, 1);
  // A window opening this minute for 2 minutes: in force now for 60-120 s more.
  const now = new Date();
  const schedule = `${now.getUTCMinutes()} ${now.getUTCHours()} * * *`;
  const ends = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), now.getUTCHours(), now.getUTCMinutes()) + 120_000;
  const name = await budget({ nodeSelector: { matchLabels: { [NODE_GROUP_LABEL]: g } }, maxDisrupted: 1, schedules: [{ schedule, duration: '2m', maxDisrupted: 0 }] });
  const watch = await watchDisrupted([g]);
  const h = await f.start({ nodeGroupName: g, selector: { matchLabels: { [NODE_GROUP_LABEL]: g } }, cycleSettings: { concurrency: 1 } }, 'cnr-freeze');
  const held = await waitFor('the cycle waits for the window', async () => {
    const s = await h.query(cycleStatusQuery);
    return s.message.startsWith('waiting for NodeDisruptionBudget') ? s : undefined;
  }, { timeoutMs: 30_000, intervalMs: 250 });
  expect(held.message).toBe(`waiting for NodeDisruptionBudget ${name}: 0 of 0 nodes disrupted (window "${schedule}" for 2m (until ${new Date(ends).toISOString().replace(/:00\.000Z$/, 'Z')}): maxDisrupted 0)`);
  expect(held.nodes[0]?.message).toBe(held.message);
  const st = ((await custom.getClusterCustomObject({ ...where, name })) as { status?: NodeDisruptionBudgetStatus }).status;
  expect(st?.limit).toMatchObject({ nodes: 0, selectedNodes: 1 });
  expect(st?.waiting?.map((e) => e.holder)).toEqual([h.workflowId]);
  const result = await h.result();
  expect(result.phase).toBe('Successful');
  expect(watch.most()).toBe(1);
  // Nothing was cordoned before the window's end (the watch saw the first cordon only after it).
  const firstCordon = (await h.fetchHistory()).events!.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'cordonNode');
  expect(Number(String(firstCordon!.eventTime!.seconds)) * 1000).toBeGreaterThanOrEqual(ends - 1000);
}, 240_000);

test('three cycles and a NodeMaintenance under a budget of 2: the maintenance waits naming the budget, never more than 2 nodes disrupted at once, all four finish', async () => {
  const gs = [uniqueName('it-nb-m-a'), uniqueName('it-nb-m-b'), uniqueName('it-nb-m-c')];
  groups.push(...gs);
  await Promise.all(gs.map((g) => ensureFakeNodeGroup(f.c.core, g, 2)));
  const all = [...gs, m.group];
  const name = await budget({ nodeSelector: { matchExpressions: [{ key: NODE_GROUP_LABEL, operator: 'In', values: all }] }, maxDisrupted: 2 });
  await m.pod('web', m.nodes[0]!, 0);
  await m.waitApps(['web']);
  const watch = await watchDisrupted(all);
  const started = Date.now();
  const cycles = await Promise.all(gs.map((g, i) => f.start({ nodeGroupName: g, selector: { matchLabels: { [NODE_GROUP_LABEL]: g } }, cycleSettings: { concurrency: 2 } }, `cnr-m-${i}`)));
  // The maintenance arrives once the cycles hold both slots, so its coordinators must wait.
  await waitFor('the cycles hold both slots', async () => {
    const st = ((await custom.getClusterCustomObject({ ...where, name })) as { status?: NodeDisruptionBudgetStatus }).status;
    return (st?.disruptedNodes ?? 0) >= 2;
  }, { timeoutMs: 30_000, intervalMs: 100 });
  const h = await m.create(uniqueName('it-nb-nm'), { stage: 'Drain', nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [{ key: NODE_GROUP_LABEL, operator: 'In', values: [m.group] }] }] } });
  const reasons = new Set<string>();
  const drained = await m.statusWhen(h, 'the maintenance drained', (s) => {
    for (const n of s.nodeStatuses) if (n.drainMessage.startsWith('waiting for NodeDisruptionBudget')) reasons.add(n.drainMessage.replace(/, \d+ waiting ahead$/, ''));
    if (s.drainStatus.drainMessage.includes('waiting for NodeDisruptionBudget')) reasons.add('drainStatus');
    return s.conditions.some((c) => c.type === 'Drained' && c.status === 'True');
  }, 180_000);
  expect(drained.nodeStatuses.map((n) => n.drainMessage.split('\n')[0])).toEqual(['Drained', 'Drained']);
  await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
  const done = await h.result();
  const results = await Promise.all(cycles.map((c) => c.result()));
  const took = Date.now() - started;
  expect(done.completed).toBe(true);
  expect(results.map((r) => [r.phase, r.nodesCycled])).toEqual([['Successful', 2], ['Successful', 2], ['Successful', 2]]);
  expect([...reasons]).toContain(`waiting for NodeDisruptionBudget ${name}: 2 of 2 nodes disrupted`);
  expect([...reasons]).toContain('drainStatus');
  expect(watch.most()).toBeLessThanOrEqual(2);
  expect(watch.most()).toBe(2);
  // The maintenance's nodes are uncordoned again and every slot is back.
  for (const n of m.nodes) expect((await m.c.core.readNode({ name: n })).spec?.unschedulable).toBeFalsy();
  const st = ((await custom.getClusterCustomObject({ ...where, name })) as { status?: NodeDisruptionBudgetStatus }).status;
  expect(st?.disrupted ?? []).toEqual([]);
  process.stdout.write(`three cycles and a maintenance under a budget of 2: most nodes disrupted at once ${watch.most()}, all done in ${(took / 1000).toFixed(1)} s\n`);
}, 300_000);
