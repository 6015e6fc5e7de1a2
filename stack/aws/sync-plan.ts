// What the AWS glue must change so the cluster's Nodes match the cloud, as on EKS: an InService
// Auto Scaling instance that is running gets a Node (a kubelet registers); a Node whose instance
// is no longer running goes away (the cloud controller removes it). A detached instance that is
// still running keeps its Node, exactly as on AWS.

export interface AsgInstance {
  instanceId: string;
  groupName: string;
  lifecycleState: string;
  zone: string;
  instanceType?: string;
}

export interface Ec2Instance {
  instanceId: string;
  state: string; // pending | running | shutting-down | terminated | stopping | stopped
  privateDnsName?: string;
}

export interface SyncedNode {
  name: string;
  instanceId: string;
}

export interface NodeSyncPlan {
  create: Array<{ name: string; instanceId: string; groupName: string; zone: string; instanceType?: string }>;
  delete: string[];
}

export function nodeNameFor(instanceId: string, privateDnsName?: string): string {
  return privateDnsName && privateDnsName.length > 0 ? privateDnsName : instanceId;
}

export function planNodeSync(asg: AsgInstance[], ec2: Ec2Instance[], nodes: SyncedNode[]): NodeSyncPlan {
  const ec2ById = new Map(ec2.map((i) => [i.instanceId, i]));
  const nodeByInstance = new Map(nodes.map((n) => [n.instanceId, n]));
  const live = (id: string) => {
    const s = ec2ById.get(id)?.state;
    return s === 'running' || s === 'pending';
  };
  const create: NodeSyncPlan['create'] = [];
  for (const i of asg) {
    if (i.lifecycleState !== 'InService' || ec2ById.get(i.instanceId)?.state !== 'running') continue;
    if (nodeByInstance.has(i.instanceId)) continue;
    create.push({
      name: nodeNameFor(i.instanceId, ec2ById.get(i.instanceId)?.privateDnsName),
      instanceId: i.instanceId,
      groupName: i.groupName,
      zone: i.zone,
      instanceType: i.instanceType,
    });
  }
  const del = nodes.filter((n) => !live(n.instanceId)).map((n) => n.name);
  create.sort((a, b) => a.name.localeCompare(b.name));
  del.sort();
  return { create, delete: del };
}
