// Node cycling through the AWS provider against moto: the real @aws-sdk clients detach without
// shrinking the Auto Scaling group, wait for the replacements' Nodes (made by the stack's glue),
// drain, delete the Node and terminate the old instance exactly once (counted from moto's request
// recorder: every call that reached "AWS").
import { DeleteAutoScalingGroupCommand, DescribeAutoScalingGroupsCommand } from '@aws-sdk/client-auto-scaling';
import { DescribeInstancesCommand } from '@aws-sdk/client-ec2';
import { createAws } from '../../activities/aws.js';
import { seedAutoScalingGroup } from '../../stack/aws/seed.js';
import { CycleFixture } from '../support/cycle.js';
import { recordedCalls, startRecording, stopRecording } from '../support/moto.js';
import { waitFor } from '../support/wait.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

describe('cycling an Auto Scaling group (moto)', () => {
  const f = new CycleFixture('it-cycle-asg');
  const aws = createAws();
  beforeAll(() => f.setup());
  afterAll(async () => {
    await stopRecording().catch(() => undefined);
    await aws.autoscaling.send(new DeleteAutoScalingGroupCommand({ AutoScalingGroupName: f.group, ForceDelete: true })).catch(() => undefined);
    await f.teardown();
  });

  test('replaces every instance, detaches and terminates each old one exactly once, and leaves the group at its size', async () => {
    const seeded = await seedAutoScalingGroup(aws, f.group, 3);
    const oldIds = seeded.Instances!.map((i) => i.InstanceId!).sort();
    await waitFor('a Node per instance', async () => (await f.c.core.listNode({ labelSelector: `${NODE_GROUP_LABEL}=${f.group}` })).items.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')).length === 3);
    await f.app(3, 2);
    await waitFor('3 app pods', async () => (await f.c.core.listNamespacedPod({ namespace: f.ns })).items.filter((p) => p.status?.phase === 'Running').length === 3);
    await f.watchApp();

    await startRecording();
    const result = await (await f.start({ provider: 'aws', selector: { matchLabels: { [NODE_GROUP_LABEL]: f.group } }, cycleSettings: { concurrency: 1 } })).result();
    expect(result.phase).toBe('Successful');
    expect(result.nodesCycled).toBe(3);
    expect(f.minAvailable).toBeGreaterThanOrEqual(2);

    const group = (await aws.autoscaling.send(new DescribeAutoScalingGroupsCommand({ AutoScalingGroupNames: [f.group] }))).AutoScalingGroups![0]!;
    expect(group.DesiredCapacity).toBe(3);
    const now = group.Instances!.map((i) => i.InstanceId!);
    expect(now).toHaveLength(3);
    expect(now.filter((id) => oldIds.includes(id))).toEqual([]);
    const states = (await aws.ec2.send(new DescribeInstancesCommand({ InstanceIds: oldIds }))).Reservations!.flatMap((r) => r.Instances!).map((i) => i.State!.Name);
    expect(states).toEqual(['terminated', 'terminated', 'terminated']);

    // What reached AWS: each old instance detached once without shrinking the group (surge first),
    // and terminated once; no new instance touched.
    const calls = await recordedCalls();
    const count = (actions: string[]) => {
      const per = new Map<string, number>();
      for (const c of calls.filter((x) => actions.includes(x.action))) for (const id of c.instanceIds) per.set(id, (per.get(id) ?? 0) + 1);
      return Object.fromEntries([...per].sort());
    };
    const once = Object.fromEntries(oldIds.map((id) => [id, 1]));
    expect(count(['TerminateInstances', 'TerminateInstanceInAutoScalingGroup'])).toEqual(once);
    expect(count(['DetachInstances'])).toEqual(once);
    for (const d of calls.filter((c) => c.action === 'DetachInstances')) expect(d.params.ShouldDecrementDesiredCapacity).toBe('false');
    expect(calls.filter((c) => c.action === 'SetDesiredCapacity' || c.action === 'UpdateAutoScalingGroup')).toEqual([]);
    await waitFor('the old Nodes gone, 3 new ones', async () => {
      const nodes = (await f.c.core.listNode({ labelSelector: `${NODE_GROUP_LABEL}=${f.group}` })).items.map((n) => n.spec!.providerID!.split('/').pop()!);
      return nodes.length === 3 && nodes.every((id) => now.includes(id));
    });
  }, 240_000);
});
