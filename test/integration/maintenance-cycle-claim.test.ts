// NM-7.5–7.7 on the local stack: a CycleNodeRequest and a NodeMaintenance never act on the same
// node; the first claim wins. Judged from every version of the node (a watch): the cycle's marks
// (slipway.dev/cycled-by, the detached marker) and the maintenance's (held-by) are never on it at
// once, and the loser writes nothing to it until the winner lets go.
import { Watch, type V1Node } from '@kubernetes/client-node';
import type { WorkflowHandle } from '@temporalio/client';
import { DETACHED_FROM_GROUP } from '../../api/node-groups.js';
import { HELD_BY_ANNOTATION } from '../../api/node-maintenance.js';
import { ensureFakeNodeGroup } from '../../stack/kwok/nodes.js';
import { cycleWorkflowId } from '../../workflows/ids.js';
import { cycleNodeRequestWorkflow, type nodeMaintenanceWorkflow } from '../../workflows/index.js';
import { cycleStatusQuery, setStageUpdate } from '../../workflows/messages.js';
import type { CycleStatus } from '../../workflows/cycle/types.js';
import type { MaintenanceStatus } from '../../workflows/maintenance/types.js';
import { deleteGroupNodes, uniqueName } from '../support/cluster.js';
import { mergePatch } from '../../kube/patch.js';
import { MaintenanceFixture } from '../support/maintenance.js';
import { waitFor } from '../support/wait.js';
import { CYCLED_BY } from '../../api/cycle-node-request.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';
import { DO_NOT_DISRUPT } from '../../api/names.js';

const selectNodes = (...names: string[]) => ({ nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name' as const, operator: 'In' as const, values: names }] }] });
type Maintenance = WorkflowHandle<typeof nodeMaintenanceWorkflow>;
type Cycle = WorkflowHandle<typeof cycleNodeRequestWorkflow>;

/** What the node carried, version by version. */
interface Seen {
  heldBy?: string;
  cycledBy?: string;
  detached?: string;
  unschedulable: boolean;
  deleted?: boolean;
}

const f = new MaintenanceFixture('it-nm-claim');
const groups: string[] = [];
const stops: AbortController[] = [];
beforeAll(() => f.setup(0), 60_000);
afterAll(async () => {
  for (const s of stops) s.abort();
  await f.teardown();
  for (const g of groups) await deleteGroupNodes(f.c, g);
}, 120_000);

/** A one-node group of its own (a cycle takes a whole group), watched from now on. */
async function oneNodeGroup(prefix: string): Promise<{ group: string; node: string; seen: Seen[] }> {
  const group = uniqueName(prefix);
  groups.push(group);
  const [node] = await ensureFakeNodeGroup(f.c.core, group, 1);
  f.nodes.push(node!); // the fixture's teardown ends its coordinator
  const seen: Seen[] = [];
  const list = await f.c.core.listNode();
  stops.push(
    await new Watch(f.c.config).watch(
      '/api/v1/nodes',
      { resourceVersion: list.metadata?.resourceVersion, fieldSelector: `metadata.name=${node}` },
      (type, n: V1Node) => {
        const a = n.metadata?.annotations ?? {};
        seen.push({ heldBy: a[HELD_BY_ANNOTATION], cycledBy: a[CYCLED_BY], detached: a[DETACHED_FROM_GROUP], unschedulable: n.spec?.unschedulable === true, deleted: type === 'DELETED' });
      },
      () => undefined,
    ),
  );
  return { group, node: node!, seen };
}

function startCycle(group: string, name: string, method: 'Drain' | 'Wait' = 'Drain'): Promise<Cycle> {
  const request = { namespace: f.ns, name, uid: uniqueName('uid') };
  return f.client.workflow.start(cycleNodeRequestWorkflow, {
    taskQueue: f.group,
    workflowId: cycleWorkflowId(request),
    args: [{ request, spec: { nodeGroupName: group, selector: { matchLabels: { [NODE_GROUP_LABEL]: group } }, cycleSettings: { method, concurrency: 1 } } }],
  });
}

const cycleWhen = (h: Cycle, what: string, ok: (s: CycleStatus) => boolean, timeoutMs = 90_000) =>
  waitFor(what, async () => {
    const s = await h.query(cycleStatusQuery);
    return ok(s) ? s : undefined;
  }, { timeoutMs, intervalMs: 250 });

const messageOf = (s: MaintenanceStatus, node: string) => s.nodeStatuses.find((n) => n.nodeRef.name === node)?.drainMessage;

/** Never both owners' marks on the node at once. */
function expectOneOwnerAtATime(seen: Seen[]): void {
  expect(seen.length).toBeGreaterThan(0);
  expect(seen.filter((s) => s.heldBy && (s.cycledBy || s.detached))).toEqual([]);
}

test('NM-7.5 a cycle and a maintenance started at once on the same node: exactly one acts on it, the other waits for it', async () => {
  const { group, node, seen } = await oneNodeGroup('it-nm-race');
  const name = `${f.group}-race`;
  const [m, c] = await Promise.all([f.create(name, { nodeSelector: selectNodes(node), stage: 'Cordon' }), startCycle(group, 'race')]);
  const first = await waitFor('a claim on the node', async () => seen.find((s) => s.heldBy || s.cycledBy), { timeoutMs: 60_000, intervalMs: 100 });
  if (first.heldBy) {
    // The maintenance won: the cycle touches nothing and says whom it waits for, until Complete.
    const waiting = await cycleWhen(c, 'the cycle waiting', (s) => s.message.startsWith('waiting for NodeMaintenance'));
    expect(waiting.message).toBe(`waiting for NodeMaintenance ${name} (Cordon) on node ${node}`);
    expect(seen.some((s) => s.cycledBy || s.detached)).toBe(false);
    await m.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    expect((await c.result()).phase).toBe('Successful');
  } else {
    // The cycle won: the maintenance never holds the node, says who cycles it, and counts it finished once deleted.
    const claimed = await f.statusWhen(m, 'the node reported claimed or gone', (s) => /^(Cycled by|Node no longer exists)/.test(messageOf(s, node) ?? ''));
    expect(messageOf(claimed, node)).toMatch(new RegExp(`^(Cycled by CycleNodeRequest ${f.ns}/race|Node no longer exists)$`));
    expect((await c.result()).phase).toBe('Successful');
    await f.statusWhen(m, 'Node no longer exists', (s) => messageOf(s, node) === 'Node no longer exists');
    expect(seen.some((s) => s.heldBy)).toBe(false);
  }
  expectOneOwnerAtATime(seen);
  expect(seen.at(-1)?.deleted).toBe(true); // cycled in the end
}, 240_000);

test('NM-7.6 the maintenance holds the node first: the cycle stays in its phase with "waiting for NodeMaintenance X (Drain) on node N", and cycles the node after Complete', async () => {
  const { group, node, seen } = await oneNodeGroup('it-nm-held');
  const name = `${f.group}-held`;
  const m = await f.create(name, { nodeSelector: selectNodes(node), stage: 'Drain' });
  await waitFor('the node held', async () => seen.some((s) => s.heldBy === name && s.unschedulable), { timeoutMs: 60_000, intervalMs: 100 });
  const c = await startCycle(group, 'held');
  const waiting = await cycleWhen(c, 'the cycle waiting', (s) => s.message.startsWith('waiting for NodeMaintenance'));
  expect(waiting.message).toBe(`waiting for NodeMaintenance ${name} (Drain) on node ${node}`);
  expect(waiting.nodes.map((n) => [n.nodeName, n.phase])).toEqual([[node, 'Pending']]); // no node cycle started: its cyclingTimeout has not begun
  // It keeps looking (5 s, then 10 s) and keeps its hands off.
  await new Promise((r) => setTimeout(r, 7_000));
  expect((await c.query(cycleStatusQuery)).message).toBe(waiting.message);
  expect(seen.some((s) => s.cycledBy || s.detached)).toBe(false);

  const completedAt = Date.now();
  await m.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
  const done = await c.result();
  expect(done.phase).toBe('Successful');
  expect(new Date(done.nodes[0]!.startedAt!).getTime()).toBeGreaterThanOrEqual(completedAt - 1000);
  expectOneOwnerAtATime(seen);
  // The maintenance let go (held-by gone) before the cycle claimed the node.
  const claimedAt = seen.findIndex((s) => s.cycledBy);
  expect(claimedAt).toBeGreaterThan(seen.findIndex((s) => s.heldBy));
  expect(seen.slice(claimedAt).some((s) => s.heldBy)).toBe(false);
}, 240_000);

describe('NM-7.7 the cycle claimed the node first', () => {
  /** A cycle (Wait method) held in its node cycle by a do-not-disrupt pod, and a Drain maintenance of the node. */
  async function claimedThenMaintained(prefix: string) {
    const g = await oneNodeGroup(prefix);
    await f.pod(`${prefix}-app`, g.node, 0);
    const pod = await waitFor('the pod Running', async () => (await f.pods()).find((p) => p.spec?.nodeName === g.node && p.status?.phase === 'Running'));
    await f.c.core.patchNamespacedPod({ namespace: f.ns, name: pod!.metadata!.name!, body: { metadata: { annotations: { [DO_NOT_DISRUPT]: 'true' } } } }, mergePatch);
    const c = await startCycle(g.group, prefix, 'Wait');
    await cycleWhen(c, 'the node cycle waiting for the pod', (s) => s.nodes[0]?.phase === 'WaitingPods');
    const name = `${f.group}-${prefix}`;
    const m = await f.create(name, { nodeSelector: selectNodes(g.node), stage: 'Drain' });
    const s = await f.statusWhen(m, 'the node reported claimed', (x) => messageOf(x, g.node) === `Cycled by CycleNodeRequest ${f.ns}/${prefix}`);
    return { ...g, c, m, pod: pod!.metadata!.name!, status: s };
  }

  test('the maintenance neither cordons nor drains it, says "Cycled by CycleNodeRequest ns/name", and counts it finished once the cycle deletes it', async () => {
    const { node, c, m, pod, seen } = await claimedThenMaintained('it-nm-cyc');
    await new Promise((r) => setTimeout(r, 6_000)); // a coordinator pass or more
    expect(seen.some((s) => s.heldBy)).toBe(false);
    expect((await f.evictions()).filter((e) => e.objectRef?.name === pod)).toEqual([]);
    // The pod may go: the cycle drains and deletes the node.
    await f.c.core.patchNamespacedPod({ namespace: f.ns, name: pod, body: { metadata: { annotations: { [DO_NOT_DISRUPT]: null } } } }, mergePatch);
    expect((await c.result()).phase).toBe('Successful');
    const s = await f.statusWhen(m, 'Node no longer exists', (x) => messageOf(x, node) === 'Node no longer exists');
    expect(s.stage).toBe('Drain');
    expect((await f.evictions()).filter((e) => e.objectRef?.name === pod)).toHaveLength(1); // the cycle's, once
    expectOneOwnerAtATime(seen);
  }, 240_000);

  test('when the cycle heals the node (uncordoned, claim removed), the maintenance takes it as if it had just started matching', async () => {
    const { node, c, m, seen } = await claimedThenMaintained('it-nm-heal');
    await c.cancel(); // the request was deleted: healing puts the node back
    await c.result().catch(() => undefined);
    const s = await f.statusWhen(m, 'the node drained by the maintenance', (x) => messageOf(x, node) === 'Drained', 120_000);
    expect(s.conditions.find((x) => x.type === 'Drained')?.status).toBe('True');
    const now = await f.c.core.readNode({ name: node });
    expect(now.metadata?.annotations?.[HELD_BY_ANNOTATION]).toBe(`${f.group}-it-nm-heal`);
    expect(now.metadata?.annotations?.[CYCLED_BY]).toBeUndefined();
    expect(now.spec?.unschedulable).toBe(true);
    expectOneOwnerAtATime(seen);
    // The claim went only after the cycle's uncordon, so nothing of the cycle's undid the maintenance's cordon.
    const heldAt = seen.findIndex((x) => x.heldBy);
    expect(seen.slice(heldAt).every((x) => x.unschedulable)).toBe(true);
  }, 240_000);
});
