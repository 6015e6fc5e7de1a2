// E5(b) and E5(b′) on the local stack (NM-5.9–5.11): a provider pod stays on its node while a lock on
// its component exists, the node carries the maintenance-required label meanwhile, and a dependent
// that requires the component is promoted ahead of the drain plan. The audit log is the witness.
import { LOCK_ANNOTATION_INFIX, maintenanceRequiredLabel, PROVIDES_ANNOTATION, REQUIRES_ANNOTATION } from '../../api/dependency-locks.js';
import { MAX_PRIORITY } from '../../api/drain-plan.js';
import { setStageUpdate } from '../../workflows/messages.js';
import { appOf, MaintenanceFixture } from '../support/maintenance.js';
import { waitFor } from '../support/wait.js';
import { mergePatch } from '../../kube/patch.js';

const selectNodes = (...names: string[]) => ({ nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name' as const, operator: 'In' as const, values: names }] }] });
// Two entries: pods up to priority 1000 first, then the rest (the test's "D≤1e9, then the rest").
const drainPlan = [{ podType: 'Default' as const, podPriority: 1000 }, { podType: 'Default' as const, podPriority: MAX_PRIORITY }];
const lock = (holder: string) => `l2-agent${LOCK_ANNOTATION_INFIX}${holder}`;

describe('dependency locks (E5 b, b′)', () => {
  const f = new MaintenanceFixture('it-nm-e5');
  beforeAll(() => f.setup(2), 60_000);
  afterAll(() => f.teardown(), 60_000);

  const evictedApps = async () => (await f.evictions()).map((e) => appOf(e.objectRef!.name!));
  const nodeLabels = async (name: string) => (await f.c.core.readNode({ name })).metadata?.labels ?? {};

  test('E5(b) NM-5.9/5.10: l2 is held by the node lock, named in status, the node labelled maintenance-required; nova leaves, l2 stays until the lock is removed, then leaves and the label goes', async () => {
    const seven = f.nodes[0]!;
    await f.c.core.patchNode({ name: seven, body: { metadata: { annotations: { [lock('nova-compute')]: '' } } } }, mergePatch);
    await f.pod('l2', seven, 100, {}, {}, { [PROVIDES_ANNOTATION]: 'l2-agent' });
    await f.pod('nova', seven, 100);
    await f.waitApps(['l2', 'nova']);

    const h = await f.create(`${f.group}-b`, { nodeSelector: selectNodes(seven), stage: 'Drain', drainPlan });
    const held = await f.statusWhen(h, 'l2 held by the lock', (s) => (s.nodeStatuses[0]?.drainMessage ?? '').includes('held by dependency lock l2-agent (holders: nova-compute)'), 120_000);
    expect(held.nodeStatuses[0]!.podsBlocked).toBeGreaterThanOrEqual(1);
    await waitFor('the maintenance-required label', async () => (await nodeLabels(seven))[maintenanceRequiredLabel('l2-agent')] === 'true');
    await waitFor('nova evicted', async () => (await evictedApps()).includes('nova'));
    await new Promise((r) => setTimeout(r, 3000)); // l2 stays after nova is gone
    expect(await evictedApps()).toEqual(['nova']);
    expect((await f.audit()).filter((e) => e.objectRef?.namespace === f.ns && appOf(e.objectRef.name) === 'l2' && e.verb === 'delete' && !e.user?.username?.startsWith('system:'))).toEqual([]);

    // The dependents' operator removes its lock: l2 leaves promptly.
    const removedAt = Date.now();
    await f.c.core.patchNode({ name: seven, body: { metadata: { annotations: { [lock('nova-compute')]: null } } } }, mergePatch);
    await waitFor('l2 evicted', async () => (await evictedApps()).includes('l2'), { timeoutMs: 30_000 });
    const l2At = (await f.evictions()).find((e) => appOf(e.objectRef!.name!) === 'l2')!;
    expect(new Date(l2At.requestReceivedTimestamp).getTime()).toBeGreaterThanOrEqual(removedAt - 1000);
    await f.statusWhen(h, 'Drained', (s) => s.conditions.some((c) => c.type === 'Drained' && c.status === 'True'), 120_000);
    await waitFor('the label removed', async () => (await nodeLabels(seven))[maintenanceRequiredLabel('l2-agent')] === undefined);
    await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await h.result();
  }, 240_000);

  test('E5(b′) NM-5.11: nova, which requires l2-agent and would be targeted in the later entry, is promoted and evicted first with a Warning Event; l2 is evicted only after nova is deleted', async () => {
    const seven = f.nodes[1]!;
    await f.pod('l2b', seven, 100, {}, {}, { [PROVIDES_ANNOTATION]: 'l2-agent' });
    await f.pod('novab', seven, 5000, {}, {}, { [REQUIRES_ANNOTATION]: 'l2-agent' });
    const running = await f.waitApps(['l2b', 'novab']);
    const l2 = running.find((p) => appOf(p.metadata?.name) === 'l2b')!;
    const novaPod = running.find((p) => appOf(p.metadata?.name) === 'novab')!.metadata!.name!;
    // A finalizer keeps nova terminating for a while once evicted, so "after nova left" is measurable.
    const HOLD = `${f.group}.test/hold`;
    await f.c.core.patchNamespacedPod({ namespace: f.ns, name: novaPod, body: { metadata: { finalizers: [HOLD] } } }, mergePatch);
    // Watch nova's pod: the first moment it is gone or in a terminal phase (NM-5.5); release the finalizer 3 s into its termination.
    let novaLeftAt: number | undefined;
    let watching = true;
    const watcher = (async () => {
      let terminatingSince: number | undefined;
      while (watching && novaLeftAt === undefined) {
        const p = await f.c.core.readNamespacedPod({ namespace: f.ns, name: novaPod }).catch(() => undefined);
        if (!p || p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed') novaLeftAt = Date.now();
        else if (p.metadata?.deletionTimestamp) {
          terminatingSince ??= Date.now();
          if (Date.now() - terminatingSince > 3000) await f.c.core.patchNamespacedPod({ namespace: f.ns, name: novaPod, body: { metadata: { finalizers: null } } }, mergePatch);
        }
        await new Promise((r) => setTimeout(r, 100));
      }
    })();
    const h = await f.create(`${f.group}-bp`, { nodeSelector: selectNodes(seven), stage: 'Drain', drainPlan });
    await f.statusWhen(h, 'Drained', (s) => s.conditions.some((c) => c.type === 'Drained' && c.status === 'True'), 150_000);
    watching = false;
    await watcher;

    const evictions = (await f.evictions()).filter((e) => ['l2b', 'novab'].includes(appOf(e.objectRef!.name!)));
    expect(evictions.map((e) => appOf(e.objectRef!.name!))).toEqual(['novab', 'l2b']);
    expect(evictions[0]!.objectRef!.name).toBe(novaPod);
    expect(novaLeftAt).toBeDefined();
    // l2 was asked to leave only once nova had left (the watch above polls every 100 ms).
    expect(new Date(evictions[1]!.requestReceivedTimestamp).getTime()).toBeGreaterThanOrEqual(novaLeftAt! - 500);

    const events = (await f.c.core.listNamespacedEvent({ namespace: f.ns, fieldSelector: `involvedObject.name=${novaPod},reason=DrainPromotedPod` })).items;
    expect(events.map((e) => [e.type, e.message])).toEqual([['Warning', `Slipway drain of node ${seven}: evicted ahead of the drain plan: requires l2-agent provided by ${f.ns}/${l2.metadata!.name}`]]);
    await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await h.result();
  }, 240_000);
});
