// The drift observer (issue 15 §2) on the local stack: a NodeGroup's template turned into one
// CycleNodeRequest for the nodes whose launch template changed, never a second while it runs, and
// none when the observer is switched off; the AWS provider's drift witness on moto.
import { CreateAutoScalingGroupCommand, DeleteAutoScalingGroupCommand, DetachInstancesCommand } from '@aws-sdk/client-auto-scaling';
import { CreateLaunchTemplateCommand, CreateLaunchTemplateVersionCommand, DeleteLaunchTemplateCommand, ModifyLaunchTemplateCommand, TerminateInstancesCommand } from '@aws-sdk/client-ec2';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { createAws } from '../../activities/aws.js';
import { createAwsProvider } from '../../activities/providers/aws.js';
import { instanceIdFromProviderID } from '../../activities/providers/aws-provider-id.js';
import { setKwokTemplateHash } from '../../stack/kwok/nodes.js';
import { CYCLE_NODE_REQUEST } from '../../api/cycle-node-request.js';
import { DRIFT_OBSERVER_ANNOTATION, FROM_NODE_GROUP_LABEL, NODE_GROUP, TEMPLATE_HASH_LABEL, type NodeGroupObject } from '../../api/node-group-kind.js';
import { nodeGroupObserverWorkflowId } from '../../workflows/ids.js';
import { BridgeFixture } from '../support/bridge.js';
import { uniqueName } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';
import { mergePatch } from '../../kube/patch.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

const f = new BridgeFixture('it-drift');
const custom = () => f.c.config.makeApiClient(CustomObjectsApi);
const ngRef = { group: NODE_GROUP.group, version: NODE_GROUP.version, plural: NODE_GROUP.plural };
const made: string[] = [];
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  await f.setup();
}, 60_000);
afterAll(async () => {
  for (const c of cleanups) await c().catch(() => undefined);
  for (const name of made) await custom().deleteClusterCustomObject({ ...ngRef, name }).catch(() => undefined);
  await f.teardown();
}, 60_000);

const setTemplateHash = (group: string, hash: string | null) => setKwokTemplateHash(f.c.core, group, hash);

async function createNodeGroup(name: string, group: string, annotations?: Record<string, string>): Promise<NodeGroupObject> {
  made.push(name);
  const body = {
    apiVersion: `${NODE_GROUP.group}/${NODE_GROUP.version}`,
    kind: NODE_GROUP.kind,
    metadata: { name, annotations },
    spec: {
      requestNamespace: f.ns,
      template: { nodeGroupName: group, provider: 'kwok', selector: { matchLabels: { [NODE_GROUP_LABEL]: group } }, cycleSettings: { concurrency: 2 } },
      driftObserver: { interval: '5s' },
    },
  };
  return (await custom().createClusterCustomObject({ ...ngRef, body })) as NodeGroupObject;
}

const readNodeGroup = async (name: string) => (await custom().getClusterCustomObject({ ...ngRef, name })) as NodeGroupObject;
async function requestsFrom(name: string): Promise<Array<{ metadata: { name: string }; spec: { nodeNames?: string[] }; status?: { phase?: string } }>> {
  const l = (await custom().listNamespacedCustomObject({ group: CYCLE_NODE_REQUEST.group, version: CYCLE_NODE_REQUEST.version, plural: CYCLE_NODE_REQUEST.plural, namespace: f.ns, labelSelector: `${FROM_NODE_GROUP_LABEL}=${name}` })) as { items: never[] };
  return l.items;
}

test('kwok: drift → one request from the template for the drifted nodes, an Event, the nodes replaced from the new template, then no drift and no second request', async () => {
  await f.cycleWorker('it-drift-kwok', 2, async ({ group, taskQueue, old }) => {
    await f.bridge({ taskQueue });
    const name = uniqueName('ng');
    try {
      await setTemplateHash(group, 'v1');
      const obj = await createNodeGroup(name, group);
      const drifted = Date.now();
      const [req] = await waitFor('the drift request', async () => {
        const l = await requestsFrom(name);
        return l.length ? l : undefined;
      }, { timeoutMs: 60_000, intervalMs: 200 });
      const toRequestMs = Date.now() - drifted;
      console.log(`drift observer: NodeGroup created with 2 drifted nodes → request in ${(toRequestMs / 1000).toFixed(1)} s`);
      expect(req!.spec.nodeNames!.sort()).toEqual([...old].sort());
      const events = (await f.c.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${name},reason=DriftDetected` })).items;
      expect(events).toHaveLength(1);
      expect(events[0]!.message).toContain(`created CycleNodeRequest ${f.ns}/${req!.metadata.name}`);

      // The cycle runs (bridge + worker): the replacements are launched from the group's template now.
      await waitFor('the request Successful', async () => (await f.getCnr(req!.metadata.name))?.status?.phase === 'Successful' || undefined, { timeoutMs: 180_000 });
      const nodes = (await f.c.core.listNode({ labelSelector: `${NODE_GROUP_LABEL}=${group}` })).items;
      expect(nodes.map((n) => n.metadata!.name).filter((n) => old.includes(n!))).toEqual([]);
      expect(nodes.map((n) => n.metadata!.labels![TEMPLATE_HASH_LABEL])).toEqual(['v1', 'v1']);
      const clean = await waitFor('no drift', async () => {
        const o = await readNodeGroup(name);
        return o.status?.conditions?.find((c) => c.type === 'Drifted' && c.status === 'False') ? o : undefined;
      }, { timeoutMs: 30_000, intervalMs: 500 });
      expect(clean.status!.driftedNodes).toEqual([]);
      // A few more passes (interval 5 s): still one request.
      await new Promise((r) => setTimeout(r, 11_000));
      expect(await requestsFrom(name)).toHaveLength(1);

      // The launch template changes while the observer runs: found at its next pass (within the interval), a second request.
      await setTemplateHash(group, 'v2');
      const changed = Date.now();
      const second = await waitFor('the second drift request', async () => {
        const l = await requestsFrom(name);
        return l.length === 2 ? l.find((r) => r.metadata.name !== req!.metadata.name) : undefined;
      }, { timeoutMs: 30_000, intervalMs: 200 });
      const secondMs = Date.now() - changed;
      console.log(`drift observer: template changed under a running observer (interval 5 s) → request in ${(secondMs / 1000).toFixed(1)} s`);
      expect(secondMs).toBeLessThan(5_000 + 3_000);
      await waitFor('the second request Successful', async () => (await f.getCnr(second!.metadata.name))?.status?.phase === 'Successful' || undefined, { timeoutMs: 180_000 });
      const renewed = (await f.c.core.listNode({ labelSelector: `${NODE_GROUP_LABEL}=${group}` })).items;
      expect(renewed.map((n) => n.metadata!.labels![TEMPLATE_HASH_LABEL])).toEqual(['v2', 'v2']);

      // Deleted: the observer ends at once (woken by the bridge), not at the end of its interval.
      await custom().deleteClusterCustomObject({ ...ngRef, name });
      await waitFor('the observer closed', async () => (await f.client.workflow.getHandle(nodeGroupObserverWorkflowId({ name, uid: obj.metadata.uid! })).describe()).status.name === 'COMPLETED' || undefined, { timeoutMs: 20_000 });
    } finally {
      await setTemplateHash(group, null);
    }
  });
}, 300_000);

test('kwok: switched off by the annotation, or while another request runs for the group: the drift is reported, nothing is created', async () => {
  await f.cycleWorker('it-drift-off', 2, async ({ group, taskQueue }) => {
    await f.bridge({ taskQueue });
    const name = uniqueName('ng');
    try {
      await setTemplateHash(group, 'v2');
      await createNodeGroup(name, group, { [DRIFT_OBSERVER_ANNOTATION]: 'disabled' });
      const o = await waitFor('drift reported', async () => {
        const x = await readNodeGroup(name);
        return x.status?.conditions?.find((c) => c.type === 'Drifted')?.reason === 'ObserverDisabled' ? x : undefined;
      }, { timeoutMs: 30_000, intervalMs: 300 });
      expect(o.status!.driftedNodes).toHaveLength(2);
      expect(o.status!.message).toContain('disabled by its annotation');
      // A request someone made for the same cloud group, not finished (in a namespace no bridge watches here, so it stays so).
      const manual = uniqueName('manual');
      await f.createCnr(manual, { nodeGroupName: group, provider: 'kwok', selector: { matchLabels: { [NODE_GROUP_LABEL]: 'nothing-matches' } } }, 'default');
      cleanups.push(() => f.deleteCnr(manual, 'default'));
      await custom().patchClusterCustomObject({ ...ngRef, name, body: { metadata: { annotations: { [DRIFT_OBSERVER_ANNOTATION]: null } } } }, mergePatch);
      const waiting = await waitFor('waiting for the running request', async () => {
        const x = await readNodeGroup(name);
        return x.status?.conditions?.find((c) => c.type === 'Drifted')?.reason === 'RequestRunning' ? x : undefined;
      }, { timeoutMs: 30_000, intervalMs: 300 });
      expect(waiting.status!.message).toMatch(/waiting for CycleNodeRequest .*manual/);
      expect(await requestsFrom(name)).toEqual([]);

      // driftObserver removed: its observer ends at once (woken by the bridge).
      await custom().patchClusterCustomObject({ ...ngRef, name, body: { spec: { driftObserver: null } } }, mergePatch);
      await waitFor('the observer closed', async () => (await f.client.workflow.getHandle(nodeGroupObserverWorkflowId({ name, uid: o.metadata.uid! })).describe()).status.name === 'COMPLETED' || undefined, { timeoutMs: 20_000 });
    } finally {
      await setTemplateHash(group, null);
    }
  });
}, 180_000);

test('aws (moto): instances launched from an older launch template version drift; their replacements do not', async () => {
  const aws = createAws();
  const provider = createAwsProvider(aws);
  const group = uniqueName('it-drift-asg');
  const lt = (await aws.ec2.send(new CreateLaunchTemplateCommand({ LaunchTemplateName: group, LaunchTemplateData: { ImageId: 'ami-11111111', InstanceType: 'm5.large' } }))).LaunchTemplate!;
  const detached: string[] = [];
  try {
    await aws.autoscaling.send(new CreateAutoScalingGroupCommand({ AutoScalingGroupName: group, MinSize: 0, MaxSize: 6, DesiredCapacity: 2, LaunchTemplate: { LaunchTemplateId: lt.LaunchTemplateId, Version: '$Default' }, AvailabilityZones: ['us-east-1a'] }));
    expect(await provider.driftedInstances(group)).toEqual([]);

    // A new image, made the default (moto records the template's default version for every instance, so the image is the witness here).
    await aws.ec2.send(new CreateLaunchTemplateVersionCommand({ LaunchTemplateId: lt.LaunchTemplateId, SourceVersion: '1', LaunchTemplateData: { ImageId: 'ami-22222222' } }));
    await aws.ec2.send(new ModifyLaunchTemplateCommand({ LaunchTemplateId: lt.LaunchTemplateId, DefaultVersion: '2' }));
    const drifted = await provider.driftedInstances(group);
    expect(drifted).toHaveLength(2);
    for (const d of drifted) expect(d.reason).toBe("image ami-11111111, the template's ami-22222222");

    // One replaced (detach without decrement: the group launches from version 2): only the other drifts.
    const victim = instanceIdFromProviderID(drifted[0]!.providerID)!;
    await aws.autoscaling.send(new DetachInstancesCommand({ AutoScalingGroupName: group, InstanceIds: [victim], ShouldDecrementDesiredCapacity: false }));
    detached.push(victim);
    const after = await waitFor('the replacement launched', async () => {
      const d = (await provider.describeGroups([group]))[0]!;
      return d.instances.length === 2 && !d.instances.some((i) => i.providerID === drifted[0]!.providerID) ? provider.driftedInstances(group) : undefined;
    }, { timeoutMs: 30_000 });
    expect(after.map((d) => d.providerID)).toEqual([drifted[1]!.providerID]);

    await expect(provider.driftedInstances(uniqueName('it-no-such-asg'))).rejects.toThrow(/unknown node group/);
  } finally {
    await aws.autoscaling.send(new DeleteAutoScalingGroupCommand({ AutoScalingGroupName: group, ForceDelete: true })).catch(() => undefined);
    if (detached.length) await aws.ec2.send(new TerminateInstancesCommand({ InstanceIds: detached })).catch(() => undefined);
    await aws.ec2.send(new DeleteLaunchTemplateCommand({ LaunchTemplateId: lt.LaunchTemplateId })).catch(() => undefined);
  }
}, 120_000);
