// The Evacuation activities on the real apiserver (NM-5.1–5.7): one object per pod however many
// requesters ask, owned by the pod and labelled like it; the active evacuator and the fallback in
// status without losing an evacuator's heartbeat; the CRD refusing edits of podRef and evacuators;
// withdrawal by requester and the cancellation policy; garbage collection with the pod.
import { CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import { apiStatus } from '../../kube/client.js';
import { createEvacuationActivities, requesterFieldManager, type EvacuationObject } from '../../activities/drain/evacuation.js';
import { ACTIVE_EVACUATOR_LABEL, EVACUATION } from '../../api/evacuation.js';
import { nextEvacuationStep } from '../../shared/evacuation.js';
import { createNamespace, testCluster, uniqueName } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';
import { mergePatch, serverSideApply } from '../../kube/patch.js';
import { cycleRequester, maintenanceRequester } from '../../api/names.js';

const c = testCluster();
const ns = uniqueName('it-evac');
const custom = c.config.makeApiClient(CustomObjectsApi);
const act = createEvacuationActivities(c);
const { group, version, plural } = EVACUATION;

const M1 = maintenanceRequester('kernel-upgrade');
const C1 = cycleRequester(ns, 'workers-2026-11');

beforeAll(() => createNamespace(c, ns));
afterAll(() => c.core.deleteNamespace({ name: ns }));

/** A pod no node will take (it stays Pending, and a deletion removes it at once): only its object matters here. */
async function createPod(annotations: Record<string, string>): Promise<V1Pod> {
  return c.core.createNamespacedPod({
    namespace: ns,
    body: {
      metadata: { name: uniqueName('db'), labels: { app: 'db', tier: 'data' }, annotations },
      spec: { nodeSelector: { 'slipway.dev/no-such-node': 'true' }, containers: [{ name: 'db', image: 'db:1' }] },
    },
  });
}
const podOf = (p: V1Pod) => ({ namespace: ns, name: p.metadata!.name!, uid: p.metadata!.uid!, labels: p.metadata!.labels, annotations: p.metadata!.annotations });

async function get(name: string): Promise<EvacuationObject | undefined> {
  try {
    return (await custom.getNamespacedCustomObject({ group, version, plural, namespace: ns, name })) as EvacuationObject;
  } catch (err) {
    if (apiStatus(err) === 404) return undefined;
    throw err;
  }
}
async function list(): Promise<EvacuationObject[]> {
  return ((await custom.listNamespacedCustomObject({ group, version, plural, namespace: ns })) as { items: EvacuationObject[] }).items;
}
/** The apiserver's refusal message of a write, or undefined when it was accepted. */
async function refusal(write: () => Promise<unknown>): Promise<string | undefined> {
  try {
    await write();
    return undefined;
  } catch (err) {
    expect(apiStatus(err)).toBe(422);
    return String((err as { body?: unknown }).body);
  }
}

test('NM-5.1 two requesters asking at once, and again, make one Evacuation: named by the pod UID, owned by the pod, its labels, both requesters, evacuators by priority', async () => {
  const pod = await createPod({ 'evacuator.slipway.dev/db-operator.test': '100', 'evacuator.slipway.dev/backup': '10', 'evacuator.slipway.dev/broken': 'high' });
  const uid = pod.metadata!.uid!;
  await Promise.all([
    act.ensureEvacuation({ pod: podOf(pod), requester: M1, reason: 'kernel 6.9', progressDeadlineSeconds: 120 }),
    act.ensureEvacuation({ pod: podOf(pod), requester: C1, reason: 'cycle', progressDeadlineSeconds: 600 }),
  ]);
  const again = await act.ensureEvacuation({ pod: podOf(pod), requester: M1, reason: 'kernel 6.9', progressDeadlineSeconds: 120 });

  const all = (await list()).filter((e) => e.spec.podRef.uid === uid);
  expect(all).toHaveLength(1);
  const e = all[0]!;
  expect(again.metadata.resourceVersion).toBe(e.metadata.resourceVersion); // the repeat wrote nothing
  expect(e.metadata.name).toBe(uid);
  expect(e.metadata.ownerReferences).toEqual([{ apiVersion: 'v1', kind: 'Pod', name: pod.metadata!.name, uid }]);
  expect(e.metadata.labels).toEqual({ app: 'db', tier: 'data' });
  expect(e.spec.podRef).toEqual({ name: pod.metadata!.name, uid });
  expect([...e.spec.requesters].sort((a, b) => a.name.localeCompare(b.name))).toEqual(
    [{ name: M1, reason: 'kernel 6.9' }, { name: C1, reason: 'cycle' }].sort((a, b) => a.name.localeCompare(b.name)),
  );
  expect(e.spec.evacuators).toEqual([{ name: 'db-operator.test', priority: 100 }, { name: 'backup', priority: 10 }]);
  expect([120, 600]).toContain(e.spec.progressDeadlineSeconds); // whichever created it
});

test('NM-5.2 / NM-5.3 the active evacuator and the fallback are written to status and the label, keeping the evacuator\'s own heartbeat', async () => {
  const pod = await createPod({ 'evacuator.slipway.dev/db-operator.test': '100' });
  const ref = { namespace: ns, name: pod.metadata!.uid! };
  await act.ensureEvacuation({ pod: podOf(pod), requester: M1, progressDeadlineSeconds: 60 });

  const first = (await act.setActiveEvacuator({ ...ref, active: 'db-operator.test' }))!;
  expect(first.metadata.labels?.[ACTIVE_EVACUATOR_LABEL]).toBe('db-operator.test');
  expect(first.status?.activeEvacuator).toBe('db-operator.test');
  const activatedTime = first.status?.evacuators?.[0]?.activatedTime;
  expect(Date.parse(activatedTime ?? '')).toBeGreaterThan(Date.now() - 60_000);
  // Idempotent: a retry neither moves activatedTime nor writes.
  const retry = (await act.setActiveEvacuator({ ...ref, active: 'db-operator.test' }))!;
  expect([retry.status?.evacuators?.[0]?.activatedTime, retry.metadata.resourceVersion]).toEqual([activatedTime, first.metadata.resourceVersion]);

  // The evacuator heartbeats its own entry by server-side serverSideApply (a map list keyed by name).
  const beat = new Date().toISOString();
  await custom.patchNamespacedCustomObjectStatus(
    { group, version, plural, namespace: ns, name: ref.name, fieldManager: 'db-operator', force: true, body: { apiVersion: `${group}/${version}`, kind: EVACUATION.kind, metadata: { name: ref.name, namespace: ns }, status: { evacuators: [{ name: 'db-operator.test', heartbeatTime: beat, message: 'copying shards' }] } } },
    serverSideApply,
  );
  const beating = (await get(ref.name))!;
  expect(beating.status?.evacuators).toEqual([{ name: 'db-operator.test', activatedTime, heartbeatTime: beat, message: 'copying shards' }]);
  expect(nextEvacuationStep(beating, { exists: true, phase: 'Pending' }, Date.now())).toMatchObject({ kind: 'wait', name: 'db-operator.test', message: 'evacuating by db-operator.test: copying shards' });

  const fallback = (await act.setActiveEvacuator({ ...ref, fallback: true }))!;
  expect(fallback.status?.activeEvacuator).toBe('');
  expect(fallback.metadata.labels?.[ACTIVE_EVACUATOR_LABEL]).toBeUndefined();
  expect(fallback.status?.conditions?.map((x) => [x.type, x.status, x.reason])).toEqual([['EvictionFallback', 'True', 'NoEvacuatorLeft']]);
  expect(fallback.status?.evacuators).toEqual(beating.status?.evacuators); // the heartbeat survives
  expect(fallback.status?.cancellationPolicy).toBe('Allow'); // the CRD's default

  await act.recordFailedEviction({ ...ref, failedEvictions: 2 });
  await act.recordFailedEviction({ ...ref, failedEvictions: 1 }); // a late retry of an earlier count
  expect((await get(ref.name))?.status?.failedEvictions).toBe(2);
});

test('#25.2 a status write records the generation it saw (observedGeneration)', async () => {
  const pod = await createPod({ 'evacuator.slipway.dev/db-operator.test': '100' });
  const ref = { namespace: ns, name: pod.metadata!.uid! };
  await act.ensureEvacuation({ pod: podOf(pod), requester: M1, progressDeadlineSeconds: 60 });
  const o = (await act.setActiveEvacuator({ ...ref, active: 'db-operator.test' }))!;
  expect(o.metadata.generation).toBeGreaterThan(0);
  expect(o.status?.observedGeneration).toBe(o.metadata.generation);
});

test('the CRD refuses changing spec.podRef or spec.evacuators; requesters may change', async () => {
  const pod = await createPod({ 'evacuator.slipway.dev/a': '1' });
  const name = pod.metadata!.uid!;
  await act.ensureEvacuation({ pod: podOf(pod), requester: M1, progressDeadlineSeconds: 60 });
  const patch = (spec: unknown) => () => custom.patchNamespacedCustomObject({ group, version, plural, namespace: ns, name, body: { spec } }, mergePatch);
  expect(await refusal(patch({ podRef: { name: 'other', uid: name } }))).toContain('spec.podRef is immutable');
  expect(await refusal(patch({ evacuators: [{ name: 'a', priority: 2 }] }))).toContain('spec.evacuators is immutable');
  expect(await refusal(patch({ progressDeadlineSeconds: 5 }))).toContain('progressDeadlineSeconds');
  expect(await refusal(patch({ requesters: [{ name: C1 }] }))).toBeUndefined();
});

test('NM-5.6 requesters withdraw one by one; the last one out deletes it under Allow, and only leaves it under Forbid', async () => {
  const pod = await createPod({ 'evacuator.slipway.dev/a': '1' });
  const ref = { namespace: ns, name: pod.metadata!.uid! };
  await act.ensureEvacuation({ pod: podOf(pod), requester: M1, progressDeadlineSeconds: 60 });
  await act.ensureEvacuation({ pod: podOf(pod), requester: C1, progressDeadlineSeconds: 60 });
  expect(await act.withdrawEvacuation({ ...ref, requester: M1 })).toBe('updated');
  expect((await get(ref.name))?.spec.requesters).toEqual([{ name: C1 }]);
  expect(await act.withdrawEvacuation({ ...ref, requester: M1 })).toBe('left');
  expect(await act.withdrawEvacuation({ ...ref, requester: C1 })).toBe('deleted');
  expect(await get(ref.name)).toBeUndefined();
  expect(await act.withdrawEvacuation({ ...ref, requester: C1 })).toBe('gone');

  // Forbid (set by the evacuator): the pod keeps leaving.
  await act.ensureEvacuation({ pod: podOf(pod), requester: M1, progressDeadlineSeconds: 60 });
  await custom.patchNamespacedCustomObjectStatus({ group, version, plural, namespace: ns, name: ref.name, body: { status: { cancellationPolicy: 'Forbid' } } }, mergePatch);
  expect(await act.withdrawEvacuation({ ...ref, requester: M1 })).toBe('updated');
  const kept = await get(ref.name);
  expect(kept?.spec.requesters).toEqual([]);
  expect(kept?.status?.cancellationPolicy).toBe('Forbid');
});

test('a requester that joins later is applied under its own field manager', async () => {
  const pod = await createPod({ 'evacuator.slipway.dev/a': '1' });
  await act.ensureEvacuation({ pod: podOf(pod), requester: M1, progressDeadlineSeconds: 60 });
  const joined = await act.ensureEvacuation({ pod: podOf(pod), requester: C1, progressDeadlineSeconds: 60 });
  const managers = ((joined.metadata as { managedFields?: Array<{ manager: string; operation: string }> }).managedFields ?? []).map((m) => `${m.manager}/${m.operation}`);
  expect(managers).toEqual(expect.arrayContaining(['slipway/Update', `${requesterFieldManager(C1)}/Apply`]));
});

test('NM-5.5 the Evacuation is garbage-collected once its pod is deleted', async () => {
  const pod = await createPod({ 'evacuator.slipway.dev/a': '1' });
  const name = pod.metadata!.uid!;
  await act.ensureEvacuation({ pod: podOf(pod), requester: M1, progressDeadlineSeconds: 60 });
  await c.core.deleteNamespacedPod({ namespace: ns, name: pod.metadata!.name!, gracePeriodSeconds: 0 });
  await waitFor('Evacuation collected', async () => (await get(name)) === undefined, { timeoutMs: 90_000, intervalMs: 500 });
});
