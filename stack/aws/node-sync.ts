// The local stack's stand-in for EKS node registration: keeps kwok Nodes in step with the
// moto Auto Scaling instances (see sync-plan.ts for the rules). Runs as a stack component and
// polls, because moto emits no events. Only Nodes it labelled itself are ever deleted.
import { paginateDescribeAutoScalingGroups } from '@aws-sdk/client-auto-scaling';
import { paginateDescribeInstances } from '@aws-sdk/client-ec2';
import { createAws, type Aws } from '../../activities/aws.js';
import { apiStatus, createKube, type Kube } from '../../kube/client.js';
import { ensureNode, fakeNode } from '../../activities/providers/kwok-node.js';
import { instanceIdFromProviderID, providerIDFor } from '../../activities/providers/aws-provider-id.js';
import { SYNCED_LABEL } from '../../api/node-groups.js';
import { planNodeSync, type AsgInstance, type Ec2Instance } from './sync-plan.js';

const SYNCED_VALUE = 'aws-node-sync';

async function readCloud(aws: Aws): Promise<{ asg: AsgInstance[]; ec2: Ec2Instance[] }> {
  const asg: AsgInstance[] = [];
  for await (const page of paginateDescribeAutoScalingGroups({ client: aws.autoscaling }, {})) {
    for (const g of page.AutoScalingGroups ?? []) {
      for (const i of g.Instances ?? []) {
        asg.push({
          instanceId: i.InstanceId!,
          groupName: g.AutoScalingGroupName!,
          lifecycleState: i.LifecycleState ?? '',
          zone: i.AvailabilityZone ?? 'us-east-1a',
          instanceType: i.InstanceType,
        });
      }
    }
  }
  const ec2: Ec2Instance[] = [];
  // Terminated instances are left out (moto keeps them for ever: 127 of them cost 270 ms of moto CPU
  // per look, every second); a Node whose instance is missing goes away, as one terminated would.
  const notTerminated = [{ Name: 'instance-state-name', Values: ['pending', 'running', 'shutting-down', 'stopping', 'stopped'] }];
  for await (const page of paginateDescribeInstances({ client: aws.ec2 }, { Filters: notTerminated })) {
    for (const r of page.Reservations ?? []) {
      for (const i of r.Instances ?? []) {
        ec2.push({ instanceId: i.InstanceId!, state: i.State?.Name ?? 'unknown', privateDnsName: i.PrivateDnsName });
      }
    }
  }
  return { asg, ec2 };
}

export async function syncOnce(kube: Kube, aws: Aws): Promise<{ created: string[]; deleted: string[] }> {
  const { asg, ec2 } = await readCloud(aws);
  const list = await kube.core.listNode({ labelSelector: `${SYNCED_LABEL}=${SYNCED_VALUE}` });
  const nodes = list.items.flatMap((n) => {
    const id = instanceIdFromProviderID(n.spec?.providerID);
    return id ? [{ name: n.metadata!.name!, instanceId: id }] : [];
  });
  const plan = planNodeSync(asg, ec2, nodes);
  for (const c of plan.create) {
    await ensureNode(
      kube.core,
      fakeNode({
        name: c.name,
        nodeGroup: c.groupName,
        zone: c.zone,
        instanceType: c.instanceType,
        providerID: providerIDFor(c.zone, c.instanceId),
        labels: { [SYNCED_LABEL]: SYNCED_VALUE, 'eks.amazonaws.com/nodegroup': c.groupName },
      }),
    );
  }
  for (const name of plan.delete) {
    try {
      await kube.core.deleteNode({ name });
    } catch (err) {
      if (apiStatus(err) !== 404) throw err;
    }
  }
  return { created: plan.create.map((c) => c.name), deleted: plan.delete };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const kube = createKube();
  const aws = createAws();
  const intervalMs = Number(process.env.SLIPWAY_AWS_SYNC_INTERVAL_MS ?? 1000);
  let stopping = false;
  for (const s of ['SIGINT', 'SIGTERM'] as const) process.on(s, () => (stopping = true));
  console.log(`aws-node-sync: every ${intervalMs} ms`);
  while (!stopping) {
    try {
      const r = await syncOnce(kube, aws);
      if (r.created.length || r.deleted.length) console.log(`created [${r.created.join(' ')}] deleted [${r.deleted.join(' ')}]`);
    } catch (err) {
      console.error(`sync failed (will retry): ${(err as Error).message}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
