// NM-6.8 (E6) on the local stack: a custom controller's pod pinned to its node and tolerating the cordon
// is daemon-like (NM-6.6): a NodeMaintenance keeps it (NM-6.7) while an unpinned tolerate-all pod leaves.
import { MAX_PRIORITY } from '../../api/drain-plan.js';
import { GROUP, VERSION } from '../../api/crd.js';
import { setStageUpdate } from '../../workflows/messages.js';
import { appOf, MaintenanceFixture } from '../support/maintenance.js';
import { waitFor } from '../support/wait.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

const selectNodes = (...names: string[]) => ({ nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name' as const, operator: 'In' as const, values: names }] }] });

describe('daemon-like pods (E6)', () => {
  const f = new MaintenanceFixture('it-nm-e6');
  const owner = `${f.group}-owner`;
  beforeAll(() => f.setup(1), 60_000);
  afterAll(async () => {
    await f.objects.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: 'drainrules', name: owner }).catch(() => undefined);
    await f.teardown();
  }, 60_000);

  test('NM-6.8 a pod of another controller, pinned by a metadata.name matchField and tolerating unschedulable, survives a NodeMaintenance drain with zero evictions and is Kept; a tolerate-all Deployment pod without pinning is evicted', async () => {
    const [five] = f.nodes as [string];
    // The owner must exist (or the garbage collector deletes the pod): a DrainRule that matches no node stands in for a custom controller.
    const rule = (await f.objects.createClusterCustomObject({
      group: GROUP,
      version: VERSION,
      plural: 'drainrules',
      body: { apiVersion: `${GROUP}/${VERSION}`, kind: 'DrainRule', metadata: { name: owner }, spec: { nodes: [{ selector: { matchLabels: { 'slipway.dev/none': owner } } }], drain: { behavior: 'Skip' } } },
    })) as { metadata: { uid: string } };
    await f.c.core.createNamespacedPod({
      namespace: f.ns,
      body: {
        metadata: { name: 'l2-agent', ownerReferences: [{ apiVersion: `${GROUP}/${VERSION}`, kind: 'DrainRule', name: owner, uid: rule.metadata.uid, controller: true }] },
        spec: {
          affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: selectNodes(five) } },
          tolerations: [{ key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' }],
          terminationGracePeriodSeconds: 1,
          containers: [{ name: 'c', image: 'registry.invalid/agent:1' }],
        },
      },
    });
    // Not pinned: the group's one node is chosen by its group label, which NM-6.6 does not count as pinning.
    await f.pod('web', five, 0, {}, { nodeSelector: { [NODE_GROUP_LABEL]: f.group }, tolerations: [{ operator: 'Exists' }] });
    await waitFor('both pods Running', async () => (await f.pods()).filter((p) => p.status?.phase === 'Running').length === 2);

    const h = await f.create(`${f.group}-m`, {
      nodeSelector: selectNodes(five),
      stage: 'Drain',
      drainPlan: [{ podType: 'Default', podPriority: MAX_PRIORITY }, { podType: 'DaemonSet', podPriority: MAX_PRIORITY }],
    });
    const drained = await f.statusWhen(h, 'Drained', (s) => s.conditions.some((c) => c.type === 'Drained' && c.status === 'True'), 120_000);
    // The stack's own DaemonSet pods on the node are kept too: l2-agent is the one more.
    const onNode = (await f.c.core.listPodForAllNamespaces({ fieldSelector: `spec.nodeName=${five}` })).items;
    const daemonSetPods = onNode.filter((p) => p.metadata?.ownerReferences?.some((o) => o.controller && o.kind === 'DaemonSet')).length;
    expect(drained.nodeStatuses[0]).toMatchObject({ podsKept: daemonSetPods + 1 });

    const evicted = (await f.evictions()).map((e) => e.objectRef!.name!);
    // web's replacement tolerates the cordon and lands back on the node, so it may be evicted more than once.
    expect([...new Set(evicted.map(appOf))]).toEqual(['web']);
    expect((await f.audit()).filter((e) => e.objectRef?.namespace === f.ns && e.objectRef.name === 'l2-agent' && (e.objectRef.subresource === 'eviction' || e.verb === 'delete'))).toEqual([]);
    const agent = await f.c.core.readNamespacedPod({ namespace: f.ns, name: 'l2-agent' });
    expect(agent.metadata?.deletionTimestamp).toBeUndefined();

    await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await h.result();
  }, 200_000);
});
