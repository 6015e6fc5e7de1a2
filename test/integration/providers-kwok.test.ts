// The kwok provider on the real apiserver: a group is a node label, detaching launches a
// deterministic replacement, and every method is idempotent under retries.
import { createKwokProvider } from '../../activities/providers/kwok.js';
import { DETACHED_FROM_GROUP, DETACHED_FROM_GROUP_OLD } from '../../api/node-groups.js';
import { ensureFakeNodeGroup } from '../../stack/kwok/nodes.js';
import { testCluster, uniqueName } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';
import { mergePatch } from '../../kube/patch.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

const c = testCluster();
const provider = createKwokProvider(c);
const group = uniqueName('it-kwok');
const crashGroup = `${group}-crash`;
const oldGroup = `${group}-old`;
const pid = (name: string) => `kwok://${name}`;
const WAIT = { timeoutMs: 30_000 };

async function groupNodes(g = group) {
  return (await c.core.listNode({ labelSelector: `${NODE_GROUP_LABEL}=${g}` })).items;
}

/** Ready members of the group, by name. */
async function readyMembers(g = group): Promise<string[]> {
  return (await groupNodes(g))
    .filter((n) => n.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True'))
    .map((n) => n.metadata!.name!)
    .sort();
}

beforeAll(async () => {
  await ensureFakeNodeGroup(c.core, group, 3);
});

afterAll(async () => {
  // By label, plus by name prefix for the detached ones that no longer carry it.
  const all = (await c.core.listNode()).items;
  const ours = all.filter((n) => n.metadata!.name!.startsWith(`${group}-`) || [group, crashGroup, oldGroup].includes(n.metadata?.labels?.[NODE_GROUP_LABEL] ?? ''));
  for (const n of ours) await c.core.deleteNode({ name: n.metadata!.name! }).catch(() => undefined);
});

const [n0, n1] = [`${group}-0`, `${group}-1`];
let replacement = '';

test('describe shows the three Ready nodes InService, desired 3', async () => {
  const [d] = await provider.describeGroups([group]);
  expect(d!.name).toBe(group);
  expect(d!.desiredCapacity).toBe(3);
  expect(d!.instances).toEqual([0, 1, 2].map((i) => ({ providerID: pid(`${group}-${i}`), group, lifecycle: 'InService' })));
});

test('detach: the node leaves the group, is annotated, and a Ready replacement takes its place', async () => {
  expect(await provider.detachInstance(pid(n0), group)).toEqual({ alreadyDetached: false });
  const node = await c.core.readNode({ name: n0 });
  expect(node.metadata?.labels?.[NODE_GROUP_LABEL]).toBeUndefined();
  expect(node.metadata?.annotations?.[DETACHED_FROM_GROUP]).toBe(group);
  expect(node.metadata?.annotations?.[DETACHED_FROM_GROUP_OLD]).toBeUndefined(); // the old name is only read

  const ready = await waitFor('a Ready replacement next to the two remaining nodes', async () => {
    const r = await readyMembers();
    return r.length === 3 && r;
  }, WAIT);
  expect(ready).not.toContain(n0);
  replacement = ready.find((n) => ![`${group}-1`, `${group}-2`].includes(n))!;
  expect(replacement).toMatch(new RegExp(`^${group}-[0-9a-f]{8}$`));
  const r = await c.core.readNode({ name: replacement });
  expect(r.metadata?.labels?.['topology.kubernetes.io/zone']).toBe(node.metadata?.labels?.['topology.kubernetes.io/zone']);
  expect(r.metadata?.labels?.['node.kubernetes.io/instance-type']).toBe(node.metadata?.labels?.['node.kubernetes.io/instance-type']);

  const [d] = await provider.describeGroups([group]);
  expect(d!.desiredCapacity).toBe(3);
  expect(d!.instances.map((i) => i.providerID)).not.toContain(pid(n0));
  expect(d!.instances.every((i) => i.lifecycle === 'InService')).toBe(true);
});

test('detach again: alreadyDetached, and still exactly one replacement', async () => {
  expect(await provider.detachInstance(pid(n0), group)).toEqual({ alreadyDetached: true });
  const names = (await groupNodes()).map((n) => n.metadata!.name!).sort();
  expect(names).toEqual([`${group}-1`, `${group}-2`, replacement].sort());
});

test('attach: the detached node rejoins (4 in the group); attaching again is a no-op', async () => {
  expect(await provider.attachInstance(pid(n0), group)).toEqual({ alreadyAttached: false });
  const node = await c.core.readNode({ name: n0 });
  expect(node.metadata?.labels?.[NODE_GROUP_LABEL]).toBe(group);
  expect(node.metadata?.annotations?.[DETACHED_FROM_GROUP]).toBeUndefined();
  const [d] = await provider.describeGroups([group]);
  expect(d!.desiredCapacity).toBe(4);
  expect(d!.instances.map((i) => i.providerID)).toContain(pid(n0));
  expect(await provider.attachInstance(pid(n0), group)).toEqual({ alreadyAttached: true });
});

test('terminate: the Node is deleted; again → alreadyGone; instancesExist follows', async () => {
  expect(await provider.detachInstance(pid(n1), group)).toEqual({ alreadyDetached: false });
  expect([...(await provider.instancesExist([pid(n1), pid('no-such-node')]))]).toEqual([pid(n1)]);
  expect(await provider.terminateInstance(pid(n1))).toEqual({ alreadyGone: false });
  await waitFor(`node ${n1} gone`, async () => !(await provider.instancesExist([pid(n1)])).has(pid(n1)), WAIT);
  expect(await provider.terminateInstance(pid(n1))).toEqual({ alreadyGone: true });
});

test('a crash between the detach patch and the replacement: the retry launches it', async () => {
  const [only] = await ensureFakeNodeGroup(c.core, crashGroup, 1);
  // What the first attempt left behind: detached, no replacement yet.
  await c.core.patchNode(
    { name: only!, body: { metadata: { labels: { [NODE_GROUP_LABEL]: null }, annotations: { [DETACHED_FROM_GROUP]: crashGroup } } } },
    mergePatch,
  );
  // The emptied group is still known, thanks to the annotation.
  expect(await provider.describeGroups([crashGroup])).toEqual([{ name: crashGroup, instances: [], desiredCapacity: 0 }]);
  expect(await provider.detachInstance(pid(only!), crashGroup)).toEqual({ alreadyDetached: true });
  await waitFor('the replacement Ready', async () => (await readyMembers(crashGroup)).length === 1, WAIT);
  expect(await provider.detachInstance(pid(only!), crashGroup)).toEqual({ alreadyDetached: true });
  expect(await groupNodes(crashGroup)).toHaveLength(1);
});

test('a Node detached by the previous version (only the old slipway.dev/detached-from) is still found, and attach clears it', async () => {
  const [only] = await ensureFakeNodeGroup(c.core, oldGroup, 1);
  await c.core.patchNode(
    { name: only!, body: { metadata: { labels: { [NODE_GROUP_LABEL]: null }, annotations: { [DETACHED_FROM_GROUP_OLD]: oldGroup } } } },
    mergePatch,
  );
  // Known through the old annotation; a retried detach launches the replacement, as for the new one.
  expect(await provider.describeGroups([oldGroup])).toEqual([{ name: oldGroup, instances: [], desiredCapacity: 0 }]);
  expect(await provider.detachInstance(pid(only!), oldGroup)).toEqual({ alreadyDetached: true });
  await waitFor('the replacement Ready', async () => (await readyMembers(oldGroup)).length === 1, WAIT);
  expect(await provider.attachInstance(pid(only!), oldGroup)).toEqual({ alreadyAttached: false });
  const node = await c.core.readNode({ name: only! });
  expect(node.metadata?.labels?.[NODE_GROUP_LABEL]).toBe(oldGroup);
  expect([node.metadata?.annotations?.[DETACHED_FROM_GROUP_OLD], node.metadata?.annotations?.[DETACHED_FROM_GROUP]]).toEqual([undefined, undefined]);
});

test('unknown groups and foreign nodes are errors naming them', async () => {
  const missing = uniqueName('no-such-group');
  await expect(provider.describeGroups([group, missing])).rejects.toMatchObject({ name: 'UnknownNodeGroupError', groups: [missing] });
  await expect(provider.detachInstance(pid(`${group}-2`), missing)).rejects.toMatchObject({ name: 'InstanceInOtherGroupError' });
  await expect(provider.describeGroups([])).resolves.toEqual([]);
});
