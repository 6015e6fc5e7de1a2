// E5(a) and E5(a′) on the local stack (NM-5.1–5.5): a pod that registers an evacuator leaves by its
// Evacuation, never by an eviction, while the evacuator heartbeats; with a silent evacuator the
// progress deadline hands it to the eviction API (EvictionFallback). The audit log is the witness,
// and the time from the deadline to the fallback eviction is measured and printed.
import { CustomObjectsApi } from '@kubernetes/client-node';
import { EVACUATION, EVACUATOR_ANNOTATION_PREFIX } from '../../api/evacuation.js';
import type { EvacuationObject } from '../../activities/drain/evacuation.js';
import { MAX_PRIORITY } from '../../api/drain-plan.js';
import { setStageUpdate } from '../../workflows/messages.js';
import { ExampleEvacuator } from '../support/evacuator.js';
import { appOf, MaintenanceFixture } from '../support/maintenance.js';
import { waitFor } from '../support/wait.js';
import { maintenanceRequester } from '../../api/names.js';

const selectNodes = (...names: string[]) => ({ nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name' as const, operator: 'In' as const, values: names }] }] });
const drainPlan = [{ podType: 'Default' as const, podPriority: MAX_PRIORITY }];
const EVACUATOR = 'db-operator.test';

describe('evacuation (E5 a, a′)', () => {
  const f = new MaintenanceFixture('it-nm-e5a');
  let custom: CustomObjectsApi;
  beforeAll(async () => {
    await f.setup(2);
    custom = f.c.config.makeApiClient(CustomObjectsApi);
  }, 60_000);
  afterAll(() => f.teardown(), 60_000);

  const evacuation = (uid: string) =>
    custom.getNamespacedCustomObject({ group: EVACUATION.group, version: EVACUATION.version, plural: EVACUATION.plural, namespace: f.ns, name: uid }).then((o) => o as EvacuationObject, () => undefined);
  const podEvictions = async (name: string) => (await f.evictions()).filter((e) => e.objectRef?.name === name);

  test('E5(a) NM-5.1/5.2/5.4/5.5, NM-1.10 (one Evacuation per pod, named after its UID, in its namespace): the Evacuation is created with the evacuator active and the maintenance as requester; while it heartbeats past the deadline nothing evicts db; it deletes db, the drain completes, the Evacuation is garbage-collected', async () => {
    const node = f.nodes[0]!;
    await f.pod('db', node, 100, {}, {}, { [`${EVACUATOR_ANNOTATION_PREFIX}${EVACUATOR}`]: '100' });
    const [db] = await f.waitApps(['db']);
    const uid = db!.metadata!.uid!;
    const evacuator = new ExampleEvacuator(f.c, { name: EVACUATOR, namespace: f.ns, heartbeatMs: 3000, workMs: 16_000 }).start();
    try {
      const name = `${f.group}-a`;
      const h = await f.create(name, { nodeSelector: selectNodes(node), stage: 'Drain', drainPlan, reason: 'kernel 6.12', drain: { evacuationProgressDeadline: '10s' } });
      const e = await waitFor('the Evacuation with its evacuator active', async () => {
        const o = await evacuation(uid);
        return o?.status?.activeEvacuator === EVACUATOR && o;
      });
      expect(e.spec).toMatchObject({ podRef: { name: db!.metadata!.name, uid }, progressDeadlineSeconds: 10, evacuators: [{ name: EVACUATOR, priority: 100 }] });
      expect(e.spec.requesters).toEqual([{ name: maintenanceRequester(name), reason: 'kernel 6.12' }]);
      expect(e.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Pod', uid })]);
      const s = await f.statusWhen(h, 'db reported as evacuating', (x) => (x.nodeStatuses[0]?.drainMessage ?? '').includes(`evacuating by ${EVACUATOR}: migrating`));
      expect(s.nodeStatuses[0]!.podsBlocked).toBe(0);

      await f.statusWhen(h, 'Drained', (x) => x.conditions.some((c) => c.type === 'Drained' && c.status === 'True'), 120_000);
      // The evacuator worked 16 s, beyond the 10 s deadline, kept alive by its heartbeats: never evicted.
      expect(evacuator.heartbeats.get(uid)).toBeGreaterThanOrEqual(3);
      expect(await podEvictions(db!.metadata!.name!)).toEqual([]);
      // No hand-over and no fallback happened: only the activation is on record.
      const events = (await f.c.core.listNamespacedEvent({ namespace: f.ns, fieldSelector: `involvedObject.name=${uid}` })).items.map((x) => x.reason).sort();
      expect(events).toEqual(['EvacuatorActivated']);
      await waitFor('the Evacuation garbage-collected with its pod', async () => (await evacuation(uid)) === undefined, { timeoutMs: 60_000 });
      await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
      await h.result();
    } finally {
      await evacuator.stop();
    }
  }, 240_000);

  test('E5(a′) NM-5.2/5.3: a silent evacuator loses control at the deadline: activeEvacuator "" with EvictionFallback, then db is evicted through the eviction API', async () => {
    const node = f.nodes[1]!;
    await f.pod('dbs', node, 100, {}, {}, { [`${EVACUATOR_ANNOTATION_PREFIX}${EVACUATOR}`]: '100' });
    const [db] = await f.waitApps(['dbs']);
    const uid = db!.metadata!.uid!;
    // Watch the Evacuation: its activation and the fallback, before it goes with the pod.
    let activatedAt: number | undefined;
    let fallback: { at: number; o: EvacuationObject } | undefined;
    let watching = true;
    const watcher = (async () => {
      while (watching && !fallback) {
        const o = await evacuation(uid);
        const mine = o?.status?.evacuators?.find((x) => x.name === EVACUATOR);
        if (mine?.activatedTime) activatedAt = Date.parse(mine.activatedTime);
        if (o?.status?.activeEvacuator === '') fallback = { at: Date.now(), o };
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    const h = await f.create(`${f.group}-as`, { nodeSelector: selectNodes(node), stage: 'Drain', drainPlan, drain: { evacuationProgressDeadline: '10s' } });
    await f.statusWhen(h, 'Drained', (x) => x.conditions.some((c) => c.type === 'Drained' && c.status === 'True'), 120_000);
    watching = false;
    await watcher;

    const evictions = (await podEvictions(db!.metadata!.name!)).filter((e) => e.responseStatus?.code === 201);
    expect(evictions).toHaveLength(1);
    const evictedAt = new Date(evictions[0]!.requestReceivedTimestamp).getTime();
    expect(activatedAt).toBeDefined();
    // The fallback was written (the poll may miss its short life before the object goes with the pod: the Event stays).
    if (fallback) expect(fallback.o.status!.conditions).toContainEqual(expect.objectContaining({ type: 'EvictionFallback', status: 'True' }));
    const fallbackEvents = (await f.c.core.listNamespacedEvent({ namespace: f.ns, fieldSelector: `involvedObject.name=${uid},reason=EvictionFallback` })).items;
    expect(fallbackEvents.map((e) => e.message)).toEqual([expect.stringContaining(`${EVACUATOR} made no progress within the deadline; no evacuator left`)]);
    // Measured: from the deadline (activation + 10 s; activatedTime has second precision) to the fallback eviction.
    const deadline = activatedAt! + 10_000;
    expect(evictedAt).toBeGreaterThanOrEqual(deadline - 1000);
    console.log(`E5(a′) silent evacuator: fallback eviction ${((evictedAt - deadline) / 1000).toFixed(2)} s after the progress deadline`);
    expect(evictedAt - deadline).toBeLessThan(15_000);
    expect(appOf(evictions[0]!.objectRef!.name)).toBe('dbs');
    await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await h.result();
  }, 240_000);
});
