// The AWS provider against moto through the real SDK, with the stack's glue keeping Nodes in step:
// detach without decrement surges a replacement, the detached instance keeps its Node until it is
// terminated, and every method is idempotent.
import { DeleteAutoScalingGroupCommand } from '@aws-sdk/client-auto-scaling';
import { TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import { createAws } from '../../activities/aws.js';
import { createAwsProvider, setDesiredCapacity } from '../../activities/providers/aws.js';
import type { NodeGroupDescription } from '../../activities/providers/types.js';
import { seedAutoScalingGroup } from '../../stack/aws/seed.js';
import { instanceIdFromProviderID } from '../../activities/providers/aws-provider-id.js';
import { testCluster, uniqueName } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

const c = testCluster();
const aws = createAws();
const provider = createAwsProvider(aws);
const group = uniqueName('it-prov-asg');
const WAIT = { timeoutMs: 30_000 };
const detached: string[] = [];

const describe1 = async (): Promise<NodeGroupDescription> => (await provider.describeGroups([group]))[0]!;
const ids = (d: NodeGroupDescription) => d.instances.map((i) => i.providerID);

/** providerIDs of the Nodes the glue made for this group (a detached instance's Node keeps the label). */
async function nodeProviderIDs(): Promise<Set<string>> {
  const list = await c.core.listNode({ labelSelector: `${NODE_GROUP_LABEL}=${group}` });
  return new Set(list.items.map((n) => n.spec!.providerID!));
}

beforeAll(async () => {
  await seedAutoScalingGroup(aws, group, 3);
});

afterAll(async () => {
  // ForceDelete terminates the group's instances; detached ones are ours to terminate. The glue removes the Nodes.
  await aws.autoscaling.send(new DeleteAutoScalingGroupCommand({ AutoScalingGroupName: group, ForceDelete: true }));
  const leftovers = detached.map((p) => instanceIdFromProviderID(p)!);
  if (leftovers.length > 0) await aws.ec2.send(new TerminateInstancesCommand({ InstanceIds: leftovers })).catch(() => undefined);
});

let victim = '';

test('describe: three InService instances whose aws:/// providerIDs are those of the glue-made Nodes', async () => {
  const d = await describe1();
  expect(d.desiredCapacity).toBe(3);
  expect(d.instances).toHaveLength(3);
  for (const i of d.instances) {
    expect(i).toMatchObject({ group, lifecycle: 'InService' });
    expect(i.providerID).toMatch(/^aws:\/\/\/us-east-1a\/i-[0-9a-f]+$/);
  }
  await waitFor('a Node per instance', async () => {
    const nodes = await nodeProviderIDs();
    return ids(d).every((p) => nodes.has(p));
  }, WAIT);
  victim = ids(d)[0]!;
});

test('detach without decrement: out of the group, replaced, still running with its Node', async () => {
  expect(await provider.detachInstance(victim, group)).toEqual({ alreadyDetached: false });
  detached.push(victim);
  const d = await waitFor('three instances again, without the victim', async () => {
    const g = await describe1();
    return g.instances.length === 3 && !ids(g).includes(victim) && g;
  }, WAIT);
  expect(d.desiredCapacity).toBe(3);
  expect(await provider.instancesExist([victim])).toEqual(new Set([victim]));
  // Once the replacement has a Node the glue has run since the detach, and kept the victim's Node.
  await waitFor('Nodes for every member', async () => {
    const nodes = await nodeProviderIDs();
    return ids(d).every((p) => nodes.has(p));
  }, WAIT);
  expect((await nodeProviderIDs()).has(victim)).toBe(true);
});

test('detach again: alreadyDetached, nothing else changes', async () => {
  const before = ids(await describe1()).sort();
  expect(await provider.detachInstance(victim, group)).toEqual({ alreadyDetached: true });
  expect(ids(await describe1()).sort()).toEqual(before);
});

test('terminate the detached instance: gone, its Node removed by the glue; again → alreadyGone', async () => {
  expect(await provider.terminateInstance(victim)).toEqual({ alreadyGone: false });
  expect(await provider.instancesExist([victim])).toEqual(new Set());
  await waitFor("the victim's Node gone", async () => !(await nodeProviderIDs()).has(victim), WAIT);
  expect(await provider.terminateInstance(victim)).toEqual({ alreadyGone: true });
  expect((await describe1()).instances).toHaveLength(3);
});

test('attach: a detached instance rejoins and raises desired capacity to 4; again → alreadyAttached', async () => {
  const other = ids(await describe1())[0]!;
  expect(await provider.detachInstance(other, group)).toEqual({ alreadyDetached: false });
  detached.push(other);
  await waitFor('three instances without it', async () => {
    const g = await describe1();
    return g.instances.length === 3 && !ids(g).includes(other);
  }, WAIT);

  expect(await provider.attachInstance(other, group)).toEqual({ alreadyAttached: false });
  detached.pop();
  const d = await describe1();
  expect(ids(d)).toContain(other);
  expect(d.desiredCapacity).toBe(4);
  // moto would list the instance twice on a second AttachInstances; the provider must not send one.
  expect(await provider.attachInstance(other, group)).toEqual({ alreadyAttached: true });
  const again = await describe1();
  expect(again.desiredCapacity).toBe(4);
  expect(new Set(ids(again)).size).toBe(4);
  expect(again.instances).toHaveLength(4);
});

test('setDesiredCapacity puts the old size back after healing', async () => {
  await setDesiredCapacity(aws, group, 3);
  const d = await waitFor('three instances', async () => {
    const g = await describe1();
    return g.instances.length === 3 && g;
  }, WAIT);
  expect(d.desiredCapacity).toBe(3);
});

test('unknown groups are errors naming them, for reads and writes alike', async () => {
  const missing = uniqueName('no-such-asg');
  await expect(provider.describeGroups([group, missing])).rejects.toMatchObject({ name: 'UnknownNodeGroupError', groups: [missing] });
  const member = ids(await describe1())[0]!;
  await expect(provider.detachInstance(member, missing)).rejects.toMatchObject({ name: 'UnknownNodeGroupError' });
  await expect(provider.attachInstance(member, missing)).rejects.toMatchObject({ name: 'UnknownNodeGroupError' });
  await expect(setDesiredCapacity(aws, missing, 1)).rejects.toMatchObject({ name: 'UnknownNodeGroupError' });
  await expect(provider.terminateInstance('kwok://not-aws')).rejects.toMatchObject({ name: 'InvalidProviderIDError' });
});
