// NM-6.4 on the local stack: a maintenance's KEP-5683 node conditions appear with the right
// status, reason and message, leave kwok's own conditions alone, survive kwok's heartbeats (a
// strategic-merge patch of status, merged by type), and go False when the maintenance completes.
import { RbacAuthorizationV1Api, type V1NodeCondition } from '@kubernetes/client-node';
import { apiStatus } from '../../kube/client.js';
import { createNodeStateActivities } from '../../activities/maintenance/node-state.js';
import { HELD_BY_ANNOTATION, MAINTENANCE_STATE_LABEL } from '../../api/node-maintenance.js';
import { kubeConfigWithToken, kubeFrom } from '../support/bridge.js';
import { setStageUpdate } from '../../workflows/messages.js';
import { MaintenanceFixture } from '../support/maintenance.js';
import { waitFor } from '../support/wait.js';
import { strategicMergePatch } from '../../kube/patch.js';

const selectNodes = (...names: string[]) => ({ nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name' as const, operator: 'In' as const, values: names }] }] });
const OURS = ['MaintenanceInProgress', 'DrainInProgress', 'Drained'];
const view = (cs: V1NodeCondition[]) => Object.fromEntries(cs.filter((c) => OURS.includes(c.type)).map((c) => [c.type, [c.status, c.reason, c.message]]));
const stamp = (d: Date | string | undefined) => (d ? new Date(d).toISOString() : undefined);

describe('node conditions of a maintenance (NM-6.4)', () => {
  const f = new MaintenanceFixture('it-nm-cond');
  beforeAll(() => f.setup(1), 60_000);
  afterAll(() => f.teardown(), 60_000);

  test('NM-6.4 MaintenanceInProgress, DrainInProgress and Drained follow the hold with reasons AdminRequested/DrainCompleted naming the holder; kwok\'s conditions stay; they survive two kwok heartbeats; Complete turns them False', async () => {
    const [n] = f.nodes as [string];
    const m = `${f.group}-m`;
    const conditions = async () => (await f.c.core.readNode({ name: n })).status?.conditions ?? [];
    const kwokTypes = (await conditions()).map((c) => c.type).sort();
    expect(kwokTypes).toContain('Ready');
    expect(kwokTypes.filter((t) => OURS.includes(t))).toEqual([]);

    await f.pod('db', n, 100);
    await f.waitApps(['db']);
    await f.blockingPdb('db'); // holds the node Draining
    const h = await f.create(m, { nodeSelector: selectNodes(n), stage: 'Drain' });

    const draining = {
      MaintenanceInProgress: ['True', 'AdminRequested', `held by NodeMaintenance ${m}`],
      DrainInProgress: ['True', 'AdminRequested', `draining for NodeMaintenance ${m}`],
      Drained: ['False', 'AdminRequested', `draining for NodeMaintenance ${m}`],
    };
    const first = await waitFor('conditions Draining', async () => {
      const cs = await conditions();
      return JSON.stringify(view(cs)) === JSON.stringify(draining) ? cs : undefined;
    }, { timeoutMs: 30_000 });
    const ours = (cs: V1NodeCondition[]) => cs.filter((c) => OURS.includes(c.type)).map((c) => [c.type, stamp(c.lastHeartbeatTime), stamp(c.lastTransitionTime)]);
    const written = ours(first);

    // Two kwok heartbeats (Ready's lastHeartbeatTime moves; kwok's period is 20-45 s): ours stay, and
    // were never re-added (their own times did not move, so nobody dropped them in between).
    const beats = new Set<string>([stamp(first.find((c) => c.type === 'Ready')!.lastHeartbeatTime)!]);
    const seen = new Set<string>(); // every distinct view of the node's conditions while we wait
    await waitFor('two kwok heartbeats', async () => {
      const cs = await conditions();
      const ready = cs.find((c) => c.type === 'Ready');
      seen.add(JSON.stringify({ ours: view(cs), kwok: cs.map((c) => c.type).filter((t) => !OURS.includes(t)).sort(), ready: ready?.status }));
      beats.add(stamp(ready?.lastHeartbeatTime)!);
      return beats.size >= 3;
    }, { timeoutMs: 150_000, intervalMs: 500 });
    expect([...seen].map((x) => JSON.parse(x))).toEqual([{ ours: draining, kwok: kwokTypes, ready: 'True' }]);
    expect(ours(await conditions())).toEqual(written);

    // The PDB relaxed: the node is Drained, the drain is no longer in progress.
    await f.c.policy.deleteNamespacedPodDisruptionBudget({ name: 'db', namespace: f.ns });
    await waitFor('conditions Drained', async () => {
      const v = view(await conditions());
      return v.Drained?.[0] === 'True' && v;
    }, { timeoutMs: 60_000 });
    expect(view(await conditions())).toEqual({
      MaintenanceInProgress: ['True', 'AdminRequested', `held by NodeMaintenance ${m}`],
      DrainInProgress: ['False', 'DrainCompleted', `drained for NodeMaintenance ${m}`],
      Drained: ['True', 'DrainCompleted', `drained for NodeMaintenance ${m}`],
    });
    expect((await f.c.core.readNode({ name: n })).metadata?.labels?.[MAINTENANCE_STATE_LABEL]).toBe('Drained');

    // Complete: released, all three False; kwok's conditions are all still there.
    await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await h.result();
    const after = await conditions();
    const released = `no NodeMaintenance holds the node (released by ${m})`;
    expect(view(after)).toEqual(Object.fromEntries(OURS.map((t) => [t, ['False', 'AdminRequested', released]])));
    expect(after.map((c) => c.type).filter((t) => !OURS.includes(t)).sort()).toEqual(kwokTypes);
    expect(after.find((c) => c.type === 'Ready')!.status).toBe('True');
  }, 300_000);

  test('NM-6.4 best-effort: a worker that may not patch nodes/status still holds and releases the node (label, annotations, cordon); only the conditions are skipped', async () => {
    const [n] = f.nodes as [string];
    const name = `${f.group}-nodes-only`;
    const rbac = f.c.config.makeApiClient(RbacAuthorizationV1Api);
    await f.c.core.createNamespacedServiceAccount({ namespace: f.ns, body: { metadata: { name: 'w' } } });
    await rbac.createClusterRole({ body: { metadata: { name }, rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'patch'] }] } });
    await rbac.createClusterRoleBinding({ body: { metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name }, subjects: [{ kind: 'ServiceAccount', name: 'w', namespace: f.ns }] } });
    try {
      const tr = await f.c.core.createNamespacedServiceAccountToken({ name: 'w', namespace: f.ns, body: { spec: { audiences: [], expirationSeconds: 600 } } });
      const kube = kubeFrom(kubeConfigWithToken(tr.status!.token!));
      await waitFor('the binding in effect', async () => !!(await kube.core.readNode({ name: n })));
      // The premise: this identity is refused nodes/status.
      const denied = await kube.core
        .patchNodeStatus({ name: n, body: { status: { conditions: [] } } }, strategicMergePatch)
        .then(() => 200, (err: unknown) => apiStatus(err));
      expect(denied).toBe(403);
      const before = view((await f.c.core.readNode({ name: n })).status?.conditions ?? []);

      const { writeMaintenanceNodeState } = createNodeStateActivities(kube);
      const held = await writeMaintenanceNodeState({ node: n, holders: ['m-x'], state: 'Draining', status: { drainTargets: [] } });
      expect(held).toMatchObject({ exists: true, reverted: false });
      const node = await f.c.core.readNode({ name: n });
      expect(node.spec?.unschedulable).toBe(true);
      expect(node.metadata?.annotations?.[HELD_BY_ANNOTATION]).toBe('m-x');
      expect(node.metadata?.labels?.[MAINTENANCE_STATE_LABEL]).toBe('Draining');
      expect(view(node.status?.conditions ?? [])).toEqual(before); // not written, and nothing failed

      expect(await writeMaintenanceNodeState({ node: n, holders: [] })).toMatchObject({ exists: true });
      const released = await f.c.core.readNode({ name: n });
      expect(released.spec?.unschedulable).toBeFalsy();
      expect(released.metadata?.annotations?.[HELD_BY_ANNOTATION]).toBeUndefined();
    } finally {
      await rbac.deleteClusterRoleBinding({ name }).catch(() => undefined);
      await rbac.deleteClusterRole({ name }).catch(() => undefined);
    }
  }, 60_000);
});
