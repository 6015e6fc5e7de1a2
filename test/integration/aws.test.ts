// moto answers the real @aws-sdk clients, and the stack's glue keeps Nodes in step with the
// Auto Scaling group's instances, as on EKS.
import { DeleteAutoScalingGroupCommand, TerminateInstanceInAutoScalingGroupCommand } from '@aws-sdk/client-auto-scaling';
import { createAws } from '../../activities/aws.js';
import { seedAutoScalingGroup, describeGroup } from '../../stack/aws/seed.js';
import { testCluster, uniqueName } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

const c = testCluster();
const aws = createAws();
const group = uniqueName('it-asg');

afterAll(async () => {
  // Terminates the group's instances; the glue then removes their Nodes.
  await aws.autoscaling.send(new DeleteAutoScalingGroupCommand({ AutoScalingGroupName: group, ForceDelete: true }));
});

async function nodesByInstance(): Promise<Map<string, string>> {
  const list = await c.core.listNode({ labelSelector: `${NODE_GROUP_LABEL}=${group}` });
  return new Map(list.items.map((n) => [n.spec!.providerID!.split('/').pop()!, n.spec!.providerID!]));
}

test('every InService instance of the moto group has a Ready Node with its aws:/// providerID', async () => {
  const g = await seedAutoScalingGroup(aws, group, 3, ['us-east-1a', 'us-east-1b']);
  const instances = g.Instances ?? [];
  expect(instances).toHaveLength(3);
  const nodes = await waitFor('a Node per instance', async () => {
    const m = await nodesByInstance();
    return m.size === 3 && m;
  });
  for (const i of instances) {
    expect(nodes.get(i.InstanceId!)).toBe(`aws:///${i.AvailabilityZone}/${i.InstanceId}`);
  }
  await waitFor('the Nodes Ready (kwok animates them)', async () => {
    const list = await c.core.listNode({ labelSelector: `${NODE_GROUP_LABEL}=${group}` });
    return list.items.every((n) => n.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True'));
  });
});

test("a terminated instance's Node goes away and the replacement instance gets one", async () => {
  const before = (await describeGroup(aws, group))!.Instances!.map((i) => i.InstanceId!);
  const victim = before[0]!;
  // Without decrement, the group launches a replacement (moto does it inside the call).
  await aws.autoscaling.send(new TerminateInstanceInAutoScalingGroupCommand({ InstanceId: victim, ShouldDecrementDesiredCapacity: false }));
  const after = await waitFor('the victim Node gone and 3 Nodes again', async () => {
    const m = await nodesByInstance();
    return !m.has(victim) && m.size === 3 && m;
  });
  const current = (await describeGroup(aws, group))!.Instances!.map((i) => i.InstanceId!);
  expect(current).not.toContain(victim);
  expect([...after.keys()].sort()).toEqual([...current].sort());
});
