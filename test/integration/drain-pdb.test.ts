// PDB-aware eviction and the escape hatch, on the local stack: a refusal is reported in the PDB's
// own words and released when capacity returns; the Delete policy acts after its timeout; an
// operator's skip signal frees a live drain. Forced actions land in status and as Events.
import type { WorkflowHandle } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporalSettings } from '../../shared/temporal.js';
import { createWorker } from '../../worker/worker.js';
import { drainStatusQuery, forceDeletePodSignal, retryNowSignal, skipPodSignal } from '../../workflows/messages.js';
import { DrainFixture, evictionsOf, slipwayDeletionsOf } from '../support/drain.js';
import { mergePatch } from '../../kube/patch.js';
import type { AuditEvent } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';

async function podEvents(f: DrainFixture, reason: string) {
  const list = await f.c.core.listNamespacedEvent({ namespace: f.ns });
  return list.items.filter((e) => e.reason === reason && e.involvedObject.kind === 'Pod');
}

describe('a PDB that refuses', () => {
  const f = new DrainFixture('it-pdb');
  beforeAll(() => f.setup());
  afterAll(() => f.teardown());

  test("is reported with the PDB's message, then released when capacity returns", async () => {
    await f.deploy('web', 2);
    await f.waitRunning(2);
    await f.pdb('web', 2);
    await f.addSpare();
    const handle = await f.startDrain();

    const blocked = await waitFor('the drain to report the PDB block', async () => {
      const s = await handle.query(drainStatusQuery);
      return s.wave?.blocked.length ? s : undefined;
    });
    expect(blocked.phase).toBe('Draining');
    expect(blocked.wave!.blocked[0]!.pdbs).toEqual(['web']);
    expect(blocked.wave!.blocked[0]!.pods).toHaveLength(2);
    expect(blocked.wave!.blocked[0]!.reason).toContain('The disruption budget web needs 2 healthy pods and has 2 currently');
    expect(blocked.message).toContain("cannot evict pod as it would violate the pod's disruption budget");
    // The Web UI shows the same: blocking PDB and pods.
    const details = await handle.query<{ currentDetails: string }>('__temporal_workflow_metadata');
    expect(details.currentDetails).toContain('`web`');
    // Activities carry summaries the Web UI lists (event attribute userMetadata.summary).
    const history = await handle.fetchHistory();
    const summaries = history.events!.filter((e) => e.activityTaskScheduledEventAttributes).map((e) => Buffer.from(e.userMetadata?.summary?.data ?? []).toString());
    expect(summaries.some((x) => x.includes(`cordon ${f.node}`))).toBe(true);
    expect(summaries.some((x) => /evict 2 pods \(wave 0\)/.test(x))).toBe(true);

    // Capacity returns: a third replica lands on the spare node, so one disruption is allowed at a time.
    await f.c.apps.patchNamespacedDeployment({ name: 'web', namespace: f.ns, body: { spec: { replicas: 3 } } }, mergePatch);
    const result = await handle.result();
    expect(result.status.phase).toBe('Drained');
    expect(result.status.evicted).toBe(2);
    expect(result.status.forced).toEqual([]);
    const audit = await f.audit();
    expect(evictionsOf(audit).some((e) => e.responseStatus?.code === 429)).toBe(true);
    expect(slipwayDeletionsOf(audit)).toHaveLength(0); // released by evictions, not by force
  });
});

describe('podEvictionTimeout with policy Delete', () => {
  const f = new DrainFixture('it-delete');
  beforeAll(() => f.setup());
  afterAll(() => f.teardown());

  test('deletes a pod refused for longer than the timeout, honouring its grace period, and records it', async () => {
    await f.deploy('db', 1, {}, 2);
    const [pod] = await f.waitRunning(1);
    await f.pdb('db', 1); // never relents
    const started = Date.now();
    const result = await (await f.startDrain({ podEvictionTimeout: { after: '3s', policy: 'Delete' } })).result();
    expect(Date.now() - started).toBeGreaterThanOrEqual(3000);
    expect(result.status.phase).toBe('Drained');
    expect(result.status.forced).toHaveLength(1);
    expect(result.status.forced[0]).toMatchObject({ pod: `${f.ns}/${pod!.metadata!.name}`, action: 'DeleteAfterTimeout', by: 'policy' });
    expect(result.status.forced[0]!.reason).toContain('disruption budget db');

    const deletions = slipwayDeletionsOf(await f.audit());
    expect(deletions.map((d) => d.objectRef!.name)).toEqual([pod!.metadata!.name]);
    const events = await podEvents(f, 'DrainDeletedPodAfterTimeout');
    expect(events.map((e) => e.involvedObject.name)).toEqual([pod!.metadata!.name]);
    expect(events[0]!.type).toBe('Warning');
  });
});

describe('podEvictionTimeout with policy Fail', () => {
  const f = new DrainFixture('it-fail');
  beforeAll(() => f.setup());
  afterAll(() => f.teardown());

  test('stops the drain with the blocking reason and deletes nothing', async () => {
    await f.deploy('db', 1);
    await f.waitRunning(1);
    await f.pdb('db', 1);
    const handle = await f.startDrain({ podEvictionTimeout: { after: '2s', policy: 'Fail' } });
    await expect(handle.result()).rejects.toThrow();
    const desc = await handle.describe();
    expect(desc.status.name).toBe('FAILED');
    const s = await handle.query(drainStatusQuery);
    expect(s.phase).toBe('Failed');
    expect(s.message).toContain('eviction refused for longer than podEvictionTimeout');
    expect(s.message).toContain('disruption budget db');
    expect(slipwayDeletionsOf(await f.audit())).toHaveLength(0);
    expect(await f.waitRunning(1)).toHaveLength(1);
  });
});

describe('the skipPod signal', () => {
  const f = new DrainFixture('it-skipsig');
  beforeAll(() => f.setup());
  afterAll(() => f.teardown());

  test('frees a live drain from a blocked pod, which stays, and records the forced skip', async () => {
    await f.deploy('stuck', 1);
    const [pod] = await f.waitRunning(1);
    await f.pdb('stuck', 1);
    const handle = await f.startDrain();
    await waitFor('blocked', async () => ((await handle.query(drainStatusQuery)).wave?.blocked.length ?? 0) > 0);

    await handle.signal(skipPodSignal, { namespace: f.ns, name: pod!.metadata!.name!, reason: 'owner accepts the outage later' });
    const result = await handle.result();
    expect(result.status.phase).toBe('Drained');
    expect(result.status.forced).toEqual([expect.objectContaining({ pod: `${f.ns}/${pod!.metadata!.name}`, action: 'Skip', by: 'signal', reason: 'owner accepts the outage later' })]);
    expect((await f.waitRunning(1))[0]!.metadata!.uid).toBe(pod!.metadata!.uid);
    expect((await podEvents(f, 'DrainSkippedPod')).map((e) => e.involvedObject.name)).toEqual([pod!.metadata!.name]);
  });
});

describe('the forceDeletePod signal', () => {
  const f = new DrainFixture('it-force');
  beforeAll(() => f.setup());
  afterAll(() => f.teardown());

  test('deletes a PDB-blocked pod at once (grace 0), records it, and the drain completes', async () => {
    await f.deploy('stuck', 1, {}, 30);
    const [pod] = await f.waitRunning(1);
    await f.pdb('stuck', 1);
    const handle = await f.startDrain();
    await waitFor('blocked', async () => ((await handle.query(drainStatusQuery)).wave?.blocked.length ?? 0) > 0);
    const signalled = Date.now();
    await handle.signal(forceDeletePodSignal, { namespace: f.ns, name: pod!.metadata!.name! });
    const result = await handle.result();
    // Grace 0: gone long before its 30 s grace period.
    expect(Date.now() - signalled).toBeLessThan(15_000);
    expect(result.status.forced).toEqual([expect.objectContaining({ pod: `${f.ns}/${pod!.metadata!.name}`, action: 'ForceDelete', by: 'signal' })]);
    expect(slipwayDeletionsOf(await f.audit()).map((e) => e.objectRef!.name)).toEqual([pod!.metadata!.name]);
    expect((await podEvents(f, 'DrainForceDeletedPod')).map((e) => e.involvedObject.name)).toEqual([pod!.metadata!.name]);
  });
});

describe('the retryNow signal', () => {
  const f = new DrainFixture('it-retry');
  beforeAll(() => f.setup());
  afterAll(() => f.teardown());

  test('retries a refused eviction at once instead of after its backoff', async () => {
    await f.deploy('web', 1);
    await f.waitRunning(1);
    await f.pdb('web', 1);
    const handle = await f.startDrain();
    // Refusals at about 0, 1, 3 and 7 s: the next retry would be 8 s after the fourth.
    const refusals = await waitFor('four refusals', async () => {
      const r = evictionsOf(await f.audit()).filter((e) => e.responseStatus?.code === 429);
      return r.length >= 4 && r;
    }, { intervalMs: 100, timeoutMs: 30_000 });
    const fourth = new Date(refusals[3]!.requestReceivedTimestamp).getTime();
    await f.c.policy.patchNamespacedPodDisruptionBudget({ name: 'web', namespace: f.ns, body: { spec: { minAvailable: 0 } } }, mergePatch);
    await waitFor('PDB allows a disruption', async () => ((await f.c.policy.readNamespacedPodDisruptionBudget({ name: 'web', namespace: f.ns })).status?.disruptionsAllowed ?? 0) > 0);
    const signalledAt = Date.now();
    // Precondition: the signal comes well before the natural retry (fourth refusal + 8 s)...
    expect(signalledAt).toBeLessThan(fourth + 4000);
    await handle.signal(retryNowSignal);
    await handle.result();
    const evicted = evictionsOf(await f.audit()).find((e) => e.responseStatus?.code === 201)!;
    // ...so an eviction within 3 s of it can only come from the signal.
    expect(new Date(evicted.requestReceivedTimestamp).getTime()).toBeLessThan(signalledAt + 3000);
  });
});

describe('an eviction a PDB admitted but whose delete never came (the evicting worker died mid-request)', () => {
  const f = new DrainFixture('it-pdb-admitted');
  beforeAll(() => f.setup());
  afterAll(() => f.teardown());

  test('is finished by deleting that pod (the budget counts it already), so the drain does not wait the 2 minutes the controller keeps the entry', async () => {
    await f.deploy('web', 2);
    const [held, other] = await f.waitRunning(2);
    await f.pdb('web', 1);
    // What the eviction API leaves when its client dies between the PDB update and the delete
    // (the chaos runner's worker.drain.mid-wave: a 504 in the audit log): the pod in
    // status.disruptedPods, taken from the budget, still running.
    await f.c.policy.patchNamespacedPodDisruptionBudgetStatus(
      { name: 'web', namespace: f.ns, body: { status: { disruptedPods: { [held!.metadata!.name!]: new Date() } } } },
      mergePatch,
    );
    await waitFor('the budget spent on the admitted disruption', async () => (await f.c.policy.readNamespacedPodDisruptionBudget({ name: 'web', namespace: f.ns })).status?.disruptionsAllowed === 0);
    await f.addSpare();
    const started = Date.now();
    const result = await (await f.startDrain()).result();
    expect(result.status.phase).toBe('Drained');
    expect(Date.now() - started).toBeLessThan(60_000);
    const audit = await f.audit();
    // The admitted pod deleted by Slipway with its uid, the other one evicted once the budget allowed it.
    expect(slipwayDeletionsOf(audit).map((e) => e.objectRef!.name)).toEqual([held!.metadata!.name]);
    expect(evictionsOf(audit).filter((e) => e.responseStatus?.code === 201).map((e) => e.objectRef!.name)).toEqual([other!.metadata!.name]);
  }, 120_000);
});

// Issue 24, item 1: a skip (or a force-delete) accepted while an eviction of the pod is in flight.
// Accepted = the signal is in the drain's history (WorkflowExecutionSignaled): no eviction of that
// pod may be sent after it, whether the activity that sends it has heard of the signal or not.
describe('#24.1 no eviction of a skipped pod leaves the worker after the skip is accepted', () => {
  /** When the drain's history recorded the signal `name` (epoch ms). */
  async function acceptedAt(handle: WorkflowHandle, name: string): Promise<number> {
    const h = await handle.fetchHistory();
    const e = h.events!.find((x) => x.workflowExecutionSignaledEventAttributes?.signalName === name)!;
    return Number(e.eventTime!.seconds) * 1000 + Math.floor((e.eventTime!.nanos ?? 0) / 1e6);
  }
  /** Evictions of pod `name` the apiserver received after `ms`. */
  const evictionsAfter = (audit: AuditEvent[], name: string, ms: number) =>
    evictionsOf(audit).filter((e) => e.objectRef?.name === name && new Date(e.requestReceivedTimestamp).getTime() > ms);

  describe('a pod of an eviction batch not yet sent, under a PDB that allows every eviction', () => {
    const f = new DrainFixture('it-skiprace-batch');
    beforeAll(() => f.setup());
    afterAll(() => f.teardown());

    test('#24.1 no eviction of a skipped pod leaves the worker after the skip is accepted (batch)', async () => {
      await f.deploy('web', 3);
      const pods = await f.waitRunning(3);
      await f.pdb('web', 0); // allows them all
      // One eviction every 5 s, one at a time: the batch is out for 10 s.
      const handle = await f.startDrain({ evictionQPS: 0.2, evictionConcurrency: 1 });
      const first = await waitFor('the first eviction of the batch', async () => evictionsOf(await f.audit())[0], { intervalMs: 100, timeoutMs: 60_000 });
      const p = pods.find((x) => x.metadata!.name !== first.objectRef!.name)!;
      const name = p.metadata!.name!;
      await handle.signal(skipPodSignal, { namespace: f.ns, name, reason: 'keep this one' });
      const accepted = await acceptedAt(handle, 'skipPod');

      const result = await handle.result();
      const after = evictionsAfter(await f.audit(), name, accepted);
      console.log(`#24.1 batch: evictions of ${name} after the skip's acceptance: ${after.length}`);
      expect(after.map((e) => `${e.requestReceivedTimestamp} ${e.responseStatus?.code}`)).toEqual([]);
      expect(result.status.phase).toBe('Drained');
      expect(result.status.forced).toEqual([expect.objectContaining({ pod: `${f.ns}/${name}`, action: 'Skip', by: 'signal' })]);
      const still = await f.c.core.readNamespacedPod({ namespace: f.ns, name });
      expect(still.metadata!.uid).toBe(p.metadata!.uid);
      expect(still.metadata!.deletionTimestamp).toBeUndefined();
      expect(still.spec!.nodeName).toBe(f.node);
    }, 120_000);
  });

  // The race: the wave wait retries a refused eviction of P; the signal lands; the PDB then
  // allows it. The workflow's own worker is stopped between the signal and the PDB's change, so
  // the cancel of the wave wait cannot reach it in time, whatever the timing (the worst case of a
  // cancel that arrives only with the next heartbeat response).
  describe.each([
    ['skipPod', skipPodSignal],
    ['forceDeletePod', forceDeletePodSignal],
  ] as const)('%s while the wave wait retries the refused eviction', (signalName, signal) => {
    const f = new DrainFixture(`it-skiprace-${signalName === 'skipPod' ? 'skip' : 'force'}`);
    let workflows: { worker: Worker; running: Promise<void> } | undefined;
    const startWorkflows = async () => {
      const { worker } = await createWorker({ deps: { kube: f.c }, settings: { ...temporalSettings(), taskQueue: f.taskQueue }, overrides: { activities: {} } });
      workflows = { worker, running: worker.run() };
    };
    const stopWorkflows = async () => {
      workflows?.worker.shutdown();
      await workflows?.running.catch(() => undefined);
      workflows = undefined;
    };
    beforeAll(async () => {
      await f.setup({ worker: false });
      // Activities only: the wave wait runs here and keeps running while the workflows' worker is down.
      const { worker } = await createWorker({ deps: { kube: f.c }, settings: { ...temporalSettings(), taskQueue: f.taskQueue }, overrides: { workflowsPath: undefined } });
      f.worker = worker;
      (f as unknown as { running: Promise<void> }).running = worker.run();
      await startWorkflows();
    });
    afterAll(async () => {
      await stopWorkflows();
      await f.teardown();
    });

    test(`#24.1 no eviction of a ${signalName === 'skipPod' ? 'skipped' : 'force-deleted'} pod leaves the worker after the signal is accepted (wave wait)`, async () => {
      await f.deploy('stuck', 1);
      const [p] = await f.waitRunning(1);
      const name = p!.metadata!.name!;
      await f.pdb('stuck', 1); // refuses
      const handle = await f.startDrain();
      await waitFor('the wave wait retrying the refusal', async () => evictionsOf(await f.audit()).filter((e) => e.responseStatus?.code === 429).length >= 2, { timeoutMs: 60_000 });

      await stopWorkflows();
      await handle.signal(signal, { namespace: f.ns, name, reason: 'race' });
      const accepted = await acceptedAt(handle, signalName);
      await f.c.policy.patchNamespacedPodDisruptionBudget({ name: 'stuck', namespace: f.ns, body: { spec: { minAvailable: 0 } } }, mergePatch);
      await waitFor('the PDB to allow the eviction', async () => ((await f.c.policy.readNamespacedPodDisruptionBudget({ name: 'stuck', namespace: f.ns })).status?.disruptionsAllowed ?? 0) >= 1);
      // The wave wait's next retry after the PDB allows it: sent (the defect), or held back (its
      // heartbeat names why). Its backoff is at most 10 s, its heartbeats reach Temporal every 8 s.
      const allowedAt = Date.now();
      await waitFor('the next retry of the eviction', async () => {
        if (evictionsAfter(await f.audit(), name, accepted).some((e) => e.responseStatus?.code !== 429)) return true;
        const pending = (await handle.describe()).raw.pendingActivities ?? [];
        const details = pending.flatMap((a) => a.heartbeatDetails?.payloads ?? []).map((x) => JSON.stringify(defaultPayloadConverter.fromPayload(x)));
        return details.some((d) => d.includes('not sent')) && Date.now() - allowedAt > 12_000;
      }, { timeoutMs: 90_000, intervalMs: 500 });
      await startWorkflows();

      const result = await handle.result();
      const after = evictionsAfter(await f.audit(), name, accepted);
      console.log(`#24.1 wave wait, ${signalName}: evictions of ${name} after the signal's acceptance: ${after.length}`);
      expect(after.map((e) => `${e.requestReceivedTimestamp} ${e.responseStatus?.code}`)).toEqual([]);
      expect(result.status.phase).toBe('Drained');
      if (signalName === 'skipPod') {
        expect(result.status.forced).toEqual([expect.objectContaining({ pod: `${f.ns}/${name}`, action: 'Skip', by: 'signal' })]);
        const still = await f.c.core.readNamespacedPod({ namespace: f.ns, name });
        expect(still.metadata!.uid).toBe(p!.metadata!.uid);
        expect(still.metadata!.deletionTimestamp).toBeUndefined();
      } else {
        expect(result.status.forced).toEqual([expect.objectContaining({ pod: `${f.ns}/${name}`, action: 'ForceDelete', by: 'signal' })]);
        expect(slipwayDeletionsOf(await f.audit()).map((e) => e.objectRef!.name)).toEqual([name]);
      }
    }, 240_000);
  });
});
