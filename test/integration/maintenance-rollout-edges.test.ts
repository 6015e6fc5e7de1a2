// A rolling NodeMaintenance's edges on the local stack (docs/rolling-maintenance.md), with the real
// worker and the bridge (its status and Events): a node that never completes under each
// nodeTimeoutPolicy (RM-4.1, RM-4.2), maxFailures 0 stopping the rollout (RM-4.4), and a rollout
// crossing a CycleNodeRequest on the same node group (RM-1.5). Judged from a Node watch (every version
// of each node) and the bridge's Events. The happy paths are in maintenance-rollout.test.ts.
import { Watch, type V1Node } from '@kubernetes/client-node';
import { CYCLED_BY } from '../../api/cycle-node-request.js';
import { DO_NOT_DISRUPT } from '../../api/names.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';
import { HELD_BY_ANNOTATION } from '../../api/node-maintenance.js';
import { ROLLOUT_DONE_ANNOTATION, type NodeMaintenanceRolloutInput } from '../../api/rollout.js';
import { mergePatch } from '../../kube/patch.js';
import type { RunningBridge } from '../../starter/bridge/main.js';
import type { NodeMaintenanceObject } from '../../starter/bridge/maintenance/objects.js';
import { ensureFakeNodeGroup } from '../../stack/kwok/nodes.js';
import { BridgeFixture } from '../support/bridge.js';
import { Maintenances } from '../support/bridge-maintenance.js';
import { deleteGroupNodes, uniqueName } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';

const f = new BridgeFixture('it-roll-edge');
const nm = new Maintenances(f);
const groups: string[] = [];
const stops: AbortController[] = [];
let bridge: RunningBridge;

/** One version of a node as the watch saw it. */
interface Seen {
  node: string;
  unschedulable: boolean;
  heldBy?: string;
  cycledBy?: string;
  deleted: boolean;
}

beforeAll(async () => {
  await f.setup();
  await f.realWorker();
  bridge = await f.leadingBridge({ maintenances: true });
}, 120_000);
afterAll(async () => {
  for (const s of stops) s.abort();
  await nm.cleanup();
  await f.stopBridges();
  for (const g of groups) await deleteGroupNodes(f.c, g);
  await f.teardown();
}, 180_000);

/** Kept by the group's original nodes when a cycle detaches them (the kwok provider takes the group label off). */
const ORIGINAL_LABEL = 'example.com/it-roll-edge';

/** A kwok node group of its own, every version of its nodes (and its replacements: their names start with the group's) watched from now on. */
async function watchedGroup(prefix: string, size: number): Promise<{ group: string; nodes: string[]; seen: Seen[] }> {
  const group = uniqueName(prefix);
  groups.push(group);
  const nodes = await ensureFakeNodeGroup(f.c.core, group, size, { labels: { [ORIGINAL_LABEL]: group } });
  const seen: Seen[] = [];
  const list = await f.c.core.listNode();
  stops.push(
    await new Watch(f.c.config).watch(
      '/api/v1/nodes',
      { resourceVersion: list.metadata?.resourceVersion },
      (type, n: V1Node) => {
        if (!n.metadata?.name?.startsWith(`${group}-`)) return;
        const a = n.metadata?.annotations ?? {};
        seen.push({ node: n.metadata!.name!, unschedulable: n.spec?.unschedulable === true, heldBy: a[HELD_BY_ANNOTATION], cycledBy: a[CYCLED_BY], deleted: type === 'DELETED' });
      },
      () => undefined,
    ),
  );
  return { group, nodes, seen };
}

/** The group's nodes: its members, and its originals a cycle detached (until deleted). */
const bySelector = (group: string) => ({
  nodeSelectorTerms: [{ matchExpressions: [{ key: NODE_GROUP_LABEL, operator: 'In' as const, values: [group] }] }, { matchExpressions: [{ key: ORIGINAL_LABEL, operator: 'In' as const, values: [group] }] }],
});

async function rolling(name: string, group: string, rollout: NodeMaintenanceRolloutInput): Promise<void> {
  await nm.create(name, { stage: 'Drain', nodeSelector: bySelector(group), rollout });
}

const nodeOf = (o: NodeMaintenanceObject | undefined, node: string) => o?.status?.nodeStatuses?.find((n) => n.nodeRef.name === node);
const phaseOf = (o: NodeMaintenanceObject | undefined, node: string) => nodeOf(o, node)?.phase;

/** The maintenance object once `ok` holds. */
const objectWhen = (name: string, what: string, ok: (o: NodeMaintenanceObject) => boolean, timeoutMs = 150_000) =>
  waitFor(`${name}: ${what}`, async () => {
    const o = await nm.get(name);
    return o && ok(o) ? o : undefined;
  }, { timeoutMs, intervalMs: 250 });

const eventsOf = async (name: string, reason: string) => (await nm.events(name)).filter((e) => e.reason === reason);

/** The versions of `node` from the first one holding it by `holder` on. */
const fromHeld = (seen: Seen[], node: string, holder: string) => {
  const mine = seen.filter((s) => s.node === node);
  const at = mine.findIndex((s) => (s.heldBy ?? '').split(',').includes(holder));
  return at < 0 ? [] : mine.slice(at);
};

async function annotateDone(node: string, name: string): Promise<void> {
  await f.c.core.patchNode({ name: node, body: { metadata: { annotations: { [ROLLOUT_DONE_ANNOTATION]: name } } } }, mergePatch);
}

async function complete(name: string): Promise<void> {
  await nm.patch(name, { spec: { stage: 'Complete' } });
  await objectWhen(name, 'completed', (o) => !!o.status?.conditions?.some((c) => c.type === 'Ready' && c.reason === 'Completed'), 90_000);
}

describe('RM-4 a node that never completes', () => {
  test.concurrent('RM-4.1 RM-4.2 nodeTimeout 1m, KeepCordoned: Failed with the Event NodeFailed, kept cordoned until Complete; the next node goes on (maxFailures 1)', async () => {
    const { group, nodes, seen } = await watchedGroup('it-roll-keep', 2);
    const [first, second] = nodes as [string, string];
    const name = uniqueName('it-roll-keep');
    await rolling(name, group, { maxUnavailable: 1, nodeTimeout: '1m', nodeTimeoutPolicy: 'KeepCordoned', maxFailures: 1, completion: { annotation: true } });
    const failed = await objectWhen(name, `${first} Failed`, (o) => phaseOf(o, first) === 'Failed');
    expect(nodeOf(failed, first)?.message).toBe('no completion within 1m');
    const events = await waitFor('the NodeFailed Event', async () => {
      const e = await eventsOf(name, 'NodeFailed');
      return e.length ? e : undefined;
    }, { timeoutMs: 30_000 });
    expect(events.map((e) => [e.type, e.message])).toEqual([['Warning', `node ${first} failed: no completion within 1m`]]);
    // The next node goes on; done by the annotation, it is released, the Failed one is not.
    await objectWhen(name, `${second} AwaitingWork`, (o) => phaseOf(o, second) === 'AwaitingWork');
    await annotateDone(second, name);
    const done = await objectWhen(name, `${second} Done`, (o) => phaseOf(o, second) === 'Done');
    expect(done.status?.rollout).toMatchObject({ phase: 'Done', done: 1, failed: 1 });
    expect((await f.c.core.readNode({ name: first })).spec?.unschedulable).toBe(true);
    const completeAt = seen.length;
    await complete(name);
    await waitFor(`${first} uncordoned`, async () => (await f.c.core.readNode({ name: first })).spec?.unschedulable !== true, { timeoutMs: 30_000 });
    // From its cordon to Complete, every version of the Failed node was cordoned and held.
    const before = fromHeld(seen.slice(0, completeAt), first, name);
    expect(before.length).toBeGreaterThan(0);
    expect(before.filter((s) => !s.unschedulable || !s.heldBy)).toEqual([]);
    // The Failed node does not count against maxUnavailable (RM-1.4): the second was held beside it.
    expect(seen.filter((s) => s.node === second && s.heldBy).length).toBeGreaterThan(0);
  }, 300_000);

  test.concurrent('RM-4.2 RM-4.4 nodeTimeout 1m, Uncordon, maxFailures 0: Failed with the Event NodeFailed, released at once; the rollout stops (RolloutStopped) and takes no further node', async () => {
    const { group, nodes, seen } = await watchedGroup('it-roll-unc', 2);
    const [first, second] = nodes as [string, string];
    const name = uniqueName('it-roll-unc');
    await rolling(name, group, { maxUnavailable: 1, nodeTimeout: '1m', nodeTimeoutPolicy: 'Uncordon', maxFailures: 0, completion: { annotation: true } });
    const stopped = await objectWhen(name, 'rollout Stopped', (o) => o.status?.rollout?.phase === 'Stopped');
    expect(nodeOf(stopped, first)).toMatchObject({ phase: 'Failed', message: 'no completion within 1m' });
    expect(nodeOf(stopped, second)).toMatchObject({ phase: 'Waiting', waitingFor: 'rollout stopped' });
    expect(stopped.status?.conditions?.find((c) => c.type === 'RolloutStopped')).toMatchObject({ status: 'True', reason: 'MaxFailures', message: `1 node failed (maxFailures 0): ${first}` });
    await waitFor(`${first} uncordoned`, async () => (await f.c.core.readNode({ name: first })).spec?.unschedulable !== true, { timeoutMs: 30_000 });
    const events = await waitFor('NodeFailed and RolloutStopped Events', async () => {
      const [nf, rs] = [await eventsOf(name, 'NodeFailed'), await eventsOf(name, 'RolloutStopped')];
      return nf.length && rs.length ? [...nf, ...rs] : undefined;
    }, { timeoutMs: 30_000 });
    expect(events.map((e) => [e.type, e.reason, e.message])).toEqual([
      ['Warning', 'NodeFailed', `node ${first} failed: no completion within 1m`],
      ['Warning', 'RolloutStopped', `1 node failed (maxFailures 0): ${first}`],
    ]);
    // No further node: the second is never cordoned nor held, a while later too.
    await new Promise((r) => setTimeout(r, 5_000));
    expect(seen.filter((s) => s.node === second && (s.unschedulable || s.heldBy))).toEqual([]);
    expect(phaseOf(await nm.get(name), second)).toBe('Waiting');
    await complete(name);
    expect(seen.filter((s) => s.node === second && (s.unschedulable || s.heldBy))).toEqual([]);
  }, 300_000);
});

describe('RM-1.7 a rollout crossing a CycleNodeRequest', () => {
  test('RM-1.7 RM-1.5 first claim wins per node: the cycle waits for the node the rollout holds, the rollout waits for the node the cycle claimed (named in waitingFor) and forgets it once deleted; the replacements are rolled; both finish', async () => {
    const { group, nodes, seen } = await watchedGroup('it-roll-cnr', 2);
    const [first, second] = nodes as [string, string];
    // A pod the cycle may not evict keeps its claim on the second node until the test lets it go.
    const pod = `${group}-keep`;
    await f.c.core.createNamespacedPod({
      namespace: f.ns,
      body: { metadata: { name: pod, annotations: { [DO_NOT_DISRUPT]: 'true' } }, spec: { nodeName: second, terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: 'registry.invalid/app:1' }] } },
    });
    await waitFor('the pod Running', async () => (await f.c.core.readNamespacedPod({ name: pod, namespace: f.ns })).status?.phase === 'Running', { timeoutMs: 60_000 });
    const name = uniqueName('it-roll-cnr');
    await rolling(name, group, { maxUnavailable: 1, completion: { annotation: true } });
    await objectWhen(name, `${first} AwaitingWork`, (o) => phaseOf(o, first) === 'AwaitingWork');
    // The cycle comes: the rollout holds the first node, so the cycle claims the second.
    await f.createCnr('cross', { nodeGroupName: group, selector: { matchLabels: { [NODE_GROUP_LABEL]: group } }, cycleSettings: { method: 'Wait', concurrency: 1 } });
    const waiting = await objectWhen(name, `${second} waiting for the cycle`, (o) => nodeOf(o, second)?.waitingFor === `held by CycleNodeRequest ${f.ns}/cross`, 90_000);
    expect(phaseOf(waiting, second)).toBe('Waiting');
    expect(seen.filter((s) => s.node === first && s.cycledBy)).toEqual([]);
    // The rollout's node is done: released, the cycle may take it; the pod may go: the second is cycled.
    await annotateDone(first, name);
    await objectWhen(name, `${first} Done`, (o) => phaseOf(o, first) === 'Done' || !nodeOf(o, first));
    await f.c.core.patchNamespacedPod({ namespace: f.ns, name: pod, body: { metadata: { annotations: { [DO_NOT_DISRUPT]: null } } } }, mergePatch);
    await waitFor('the cycle Successful', async () => (await f.getCnr('cross'))?.status?.phase === 'Successful', { timeoutMs: 240_000, intervalMs: 1_000 });
    // The replacements joined the selection; the test marks each done as it awaits its work.
    const now = async () => (await f.c.core.listNode()).items.map((n) => n.metadata!.name!).filter((n) => n.startsWith(`${group}-`)).sort();
    const finished = await waitFor('the rollout Done over the replacements', async () => {
      const o = await nm.get(name);
      for (const n of o?.status?.nodeStatuses ?? []) if (n.phase === 'AwaitingWork') await annotateDone(n.nodeRef.name, name);
      const names = await now();
      const all = o?.status?.nodeStatuses ?? [];
      return o?.status?.rollout?.phase === 'Done' && all.map((n) => n.nodeRef.name).sort().join() === names.join() && all.every((n) => n.phase === 'Done') ? o : undefined;
    }, { timeoutMs: 180_000, intervalMs: 1_000 });
    const replacements = await now();
    expect(replacements.filter((n) => nodes.includes(n))).toEqual([]); // both originals cycled
    expect(finished.status?.rollout).toMatchObject({ phase: 'Done', failed: 0 });
    // First claim wins per node: never the maintenance's hold and the cycle's claim on a node at once;
    // the node the cycle claimed was never held by the rollout.
    expect(seen.filter((s) => s.heldBy && s.cycledBy)).toEqual([]);
    expect(seen.filter((s) => s.node === second && s.heldBy)).toEqual([]);
    expect(mostHeldAtOnce(seen, name)).toBe(1);
    await complete(name);
  }, 600_000);
});

/** Replays the watch: the most nodes held by `holder` at once. */
function mostHeldAtOnce(seen: Seen[], holder: string): number {
  const held = new Set<string>();
  let most = 0;
  for (const s of seen) {
    if (!s.deleted && (s.heldBy ?? '').split(',').includes(holder)) held.add(s.node);
    else held.delete(s.node);
    most = Math.max(most, held.size);
  }
  return most;
}
