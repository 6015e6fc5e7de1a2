// The Idle preview on the local stack (NM-2.2): the maintenance workflow, while Idle, reads the
// selected nodes' pods, DrainRule-free classification, and today's PDBs, and shows per node which pods
// Drain would evict in which plan entry, which it skips and why, and which a PDB blocks, all without
// a single write (judged from the apiserver's audit log).
import { createPreviewActivities } from '../../activities/maintenance/preview.js';
import { DRAIN_LABEL } from '../../activities/drain/classify.js';
import { entryString, type PlanEntry } from '../../api/drain-plan.js';
import { byControlPlane } from '../support/cluster.js';
import { maintenancePlanQuery } from '../../workflows/messages.js';
import { appOf, MaintenanceFixture } from '../support/maintenance.js';
import { waitFor } from '../support/wait.js';

const selectNodes = (...names: string[]) => ({ nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name' as const, operator: 'In' as const, values: names }] }] });
const D = (podPriority: number, podSelector?: { matchLabels: Record<string, string> }) => ({ podType: 'Default' as const, podPriority, ...(podSelector ? { podSelector } : {}) });
const WRITES = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

describe('the Idle preview', () => {
  const f = new MaintenanceFixture('it-nm-preview');
  beforeAll(() => f.setup(2), 60_000);
  afterAll(() => f.teardown(), 60_000);

  test('NM-2.2 Idle previews each pod under its plan entry, the skipped one with its reason, the PDB-blocked one with its PDB, and writes nothing', async () => {
    const [node, other] = f.nodes as [string, string];
    await f.pod('web', node, 0);
    await f.pod('pg', node, 500, { db: 'postgres' });
    await f.pod('mid', node, 3000);
    await f.pod('big', node, 1000000000);
    await f.pod('pinned', node, 0, { [DRAIN_LABEL]: 'skip' });
    await f.pod('db', node, 0);
    await f.pod('bystander', other, 0);
    await f.waitRunning(7);
    await f.c.policy.createNamespacedPodDisruptionBudget({ namespace: f.ns, body: { metadata: { name: 'db' }, spec: { maxUnavailable: 0, selector: { matchLabels: { app: 'db' } } } } });
    await waitFor('PDB db computed', async () => (await f.c.policy.readNamespacedPodDisruptionBudget({ name: 'db', namespace: f.ns })).status?.observedGeneration === 1);
    const name = `${f.group}-m`;
    const h = await f.create(name, { nodeSelector: selectNodes(node), drainPlan: [D(1000, { matchLabels: { db: 'postgres' } }), D(1000), D(5000)] });

    const s = await f.statusWhen(h, 'the preview in status', (x) => x.nodeStatuses.length === 1 && x.nodeStatuses[0]!.drainMessage.includes('blocked now'));
    expect(s.stage).toBe('Idle');
    const ns = s.nodeStatuses[0]!;
    const dbPod = (await f.pods()).find((p) => appOf(p.metadata?.name) === 'db')!.metadata!.name!;
    expect(ns.drainMessage).toBe(`Planned: 5 pods in 4 entries, 1 skipped, 0 kept; blocked now: ${f.ns}/${dbPod} (PDB db)`);
    expect([ns.podsPendingEvictionRequest, ns.podsKept, ns.activeEvictionRequests]).toEqual([5, 0, 0]);

    const plan = await h.query(maintenancePlanQuery);
    const preview = plan.preview!.nodes;
    expect(preview.map((n) => n.node)).toEqual([node]);
    const at = (e: number) => (e < 0 ? 'none' : entryString(plan.plan[e] as PlanEntry));
    const rows = Object.fromEntries(preview[0]!.pods.map((p) => [appOf(p.pod.split('/')[1]), [at(p.entry), p.action, p.reason, p.blockedBy ?? []]]));
    expect(rows).toEqual({
      pg: ['Default ≤ 1000 db=postgres', 'Evict', 'default', []],
      web: ['Default ≤ 1000', 'Evict', 'default', []],
      db: ['Default ≤ 1000', 'Evict', 'default', ['db']],
      pinned: ['Default ≤ 1000', 'Skip', `label ${DRAIN_LABEL}=skip`, []],
      mid: ['Default ≤ 5000', 'Evict', 'default', []],
      big: ['Default ≤ 1000000000', 'Evict', 'default', []],
    });
    expect(preview[0]).toMatchObject({ exists: true, evict: 5, entries: 4, skipped: 1, kept: 0, blocked: 1, podsOmitted: 0, errors: [] });

    // The same cluster again: the activity answers the digest alone (nothing new for the history).
    const again = await createPreviewActivities(f.c).previewMaintenance({ nodes: [node], plan: plan.plan, previous: plan.preview!.digest });
    expect(again).toEqual({ digest: plan.preview!.digest, unchanged: true });

    // NM-2.2: no write to any Node, no eviction, no pod write in the namespace, no finalizer.
    const writes = (await f.audit()).filter(
      (e) =>
        !byControlPlane(e) &&
        WRITES.has(e.verb) &&
        ((e.objectRef?.resource === 'nodes' && f.nodes.includes(e.objectRef.name ?? '')) || (e.objectRef?.resource === 'pods' && e.objectRef.namespace === f.ns)),
    );
    expect(writes.map((e) => `${e.verb} ${e.objectRef?.resource}/${e.objectRef?.subresource ?? ''} ${e.objectRef?.name}`)).toEqual([]);
    expect(await f.evictions()).toEqual([]);
    expect(await f.hasFinalizer(name)).toBe(false);
    expect((await f.c.core.readNode({ name: node })).spec?.unschedulable).toBeFalsy();
  }, 180_000);
});
