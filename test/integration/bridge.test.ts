// The CRD bridge on the local stack: CycleNodeRequests become exactly one workflow each, replays and
// restarts change nothing, invalid specs are reported without a workflow, deletion cancels the
// workflow and waits for it, workflow state is mirrored into status and CycleNodeStatus objects,
// one replica of several acts, and an apiserver outage is survived. Most tests run the bridge with
// no worker on its task queue, so the workflows it starts just wait and the bridge's own behaviour
// is what is observed; the mirroring tests run a scripted cycle workflow on a real worker.
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CoordinationV1Api, V1MicroTime } from '@kubernetes/client-node';
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { CYCLE_NODE_REQUEST, CycleNodeRequestSpec } from '../../api/cycle-node-request.js';
import { cycleNodeStatusName } from '../../starter/bridge/cycle/names.js';
import type { CycleNodeRequestObject } from '../../starter/bridge/cycle/objects.js';
import { runReflector } from '../../kube/controller/reflector.js';
import { cycleWorkflowId, type CycleStatus, type CycleNodeStatus } from '../../workflows/cycle/types.js';
import { cycleStatusQuery, specChangedUpdate } from '../../workflows/messages.js';
import { NodeGroupAttr, ObjectAttr, PhaseAttr } from '../../workflows/search-attributes.js';
import { withSpecUnchecked } from '../support/admission.js';
import { ApiserverProxy, BridgeFixture, kubeConfigVia, kubeFrom, validSpec } from '../support/bridge.js';
import { uniqueName } from '../support/cluster.js';
import { mergePatch } from '../../kube/patch.js';
import { waitFor } from '../support/wait.js';
import { CYCLE_FINALIZER, CYCLE_REQUEST_LABEL } from '../../api/cycle-node-request.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

const f = new BridgeFixture('it-bridge');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const GROUP = 'it-bridge-group';

beforeAll(() => f.setup());
afterEach(() => f.stopBridges());
afterAll(async () => {
  writeFileSync(`/tmp/${f.ns}.log`, f.dumpLogs());
  await f.teardown();
});

async function waitStatus(name: string, what: string, ok: (o: CycleNodeRequestObject) => boolean, timeoutMs = 20_000): Promise<CycleNodeRequestObject> {
  return waitFor(`${name}: ${what}`, async () => {
    const o = await f.getCnr(name);
    return o && ok(o) ? o : undefined;
  }, { timeoutMs, intervalMs: 50 });
}

const started = (name: string) => waitStatus(name, 'workflowId in status', (o) => Boolean(o.status?.workflowId));
const cond = (o: CycleNodeRequestObject, type: string) => o.status?.conditions?.find((c) => c.type === type);
const total = (stats: object) => Object.values(stats).reduce((a: number, b: number) => a + b, 0);

async function historyHas(workflowId: string, attr: string): Promise<boolean> {
  const h = await f.client.workflow.getHandle(workflowId).fetchHistory();
  return (h.events ?? []).some((e) => (e as Record<string, unknown>)[attr] != null);
}

async function eventReasons(name: string): Promise<string[]> {
  return (await f.events(name)).map((e) => `${e.type}/${e.reason}`);
}

test('a new CycleNodeRequest gets the finalizer and exactly one workflow (ID cnr/<ns>/<name>/<uid>), recorded in status', async () => {
  const b = await f.bridge();
  const name = uniqueName('cnr');
  const created = await f.createCnr(name, validSpec(GROUP));
  const obj = await started(name);
  const id = cycleWorkflowId(created.metadata);
  expect(id).toBe(`cnr/${f.ns}/${name}/${created.metadata.uid}`);
  expect(obj.metadata.finalizers).toContain(CYCLE_FINALIZER);
  expect(obj.status).toMatchObject({ workflowId: id, phase: 'Pending', observedGeneration: 1 });
  expect(obj.status!.runId).toMatch(/^[0-9a-f-]{36}$/);
  expect(cond(obj, 'Ready')).toMatchObject({ status: 'Unknown', reason: 'Pending' });
  expect(cond(obj, 'Progressing')).toMatchObject({ status: 'True', reason: 'Pending' });

  const d = await f.client.workflow.getHandle(id).describe();
  expect(d).toMatchObject({ type: 'cycleNodeRequestWorkflow', taskQueue: f.taskQueue, runId: obj.status!.runId });
  expect(d.status.name).toBe('RUNNING');
  expect(d.typedSearchAttributes.get(ObjectAttr)).toBe(`CycleNodeRequest/${f.ns}/${name}`);
  expect(d.typedSearchAttributes.get(NodeGroupAttr)).toBe(GROUP);
  expect(d.typedSearchAttributes.get(PhaseAttr)).toBe('Pending');
  // The input: the object's reference and its parsed spec (defaults filled in).
  const hist = await f.client.workflow.getHandle(id).fetchHistory();
  const payload = hist.events![0]!.workflowExecutionStartedEventAttributes!.input!.payloads![0]!;
  const input = JSON.parse(Buffer.from(payload.data!).toString('utf8'));
  expect(input).toMatchObject({
    request: { namespace: f.ns, name, uid: created.metadata.uid, generation: 1 },
    spec: { nodeGroupName: GROUP, cycleSettings: { method: 'Drain', cyclingTimeout: '3h' } },
  });
  await sleep(1000);
  expect(await f.executions(id)).toBe(1);
  expect(b.stats.workflowsStarted).toBe(1);
  expect(await eventReasons(name)).toContain('Normal/PhasePending');
  await f.stopBridge(b);
});

test('replayed and duplicate events (restarts, repeated touches, lost status) start exactly one workflow', async () => {
  let b = await f.bridge();
  const name = uniqueName('cnr');
  const created = await f.createCnr(name, validSpec(GROUP));
  const first = await started(name);
  const id = cycleWorkflowId(created.metadata);
  const runId = first.status!.runId;
  for (let round = 0; round < 3; round++) {
    await f.stopBridge(b);
    b = await f.bridge();
    for (let i = 0; i < 5; i++) await f.patchCnr(name, { metadata: { annotations: { 'test/touch': `${round}-${i}` } } });
    await waitFor('leader', async () => b.isLeader());
    await sleep(1000);
    // The restarted bridge finds the workflow in status: it does not even call start.
    expect(b.stats.workflowsStarted).toBe(0);
    expect(b.stats.statusWrites).toBe(0);
  }
  expect((await f.getCnr(name))!.status).toMatchObject({ workflowId: id, runId });

  // Status lost (a crash between start and the status write): start is called again and attaches.
  await f.stopBridge(b);
  const { group, version, plural } = CYCLE_NODE_REQUEST;
  const dropIds = { status: { workflowId: null, runId: null } };
  await f.custom.patchNamespacedCustomObjectStatus({ group, version, plural, namespace: f.ns, name, body: dropIds }, mergePatch);
  b = await f.bridge();
  const again = await started(name);
  expect(again.status).toMatchObject({ workflowId: id, runId });
  expect(b.stats.workflowsStarted).toBe(1);

  // And once the workflow is closed, the same object is never cycled again (REJECT_DUPLICATE).
  await f.stopBridge(b);
  await f.client.workflow.getHandle(id).terminate('test: finished');
  await f.custom.patchNamespacedCustomObjectStatus({ group, version, plural, namespace: f.ns, name, body: dropIds }, mergePatch);
  b = await f.bridge();
  const closed = await waitStatus(name, 'Failed after termination', (o) => o.status?.phase === 'Failed' && o.status.workflowId === id);
  expect(closed.status!.message).toBe('workflow terminated: test: finished');
  expect(cond(closed, 'Ready')).toMatchObject({ status: 'False', reason: 'Failed' });
  await sleep(1000);
  expect(await f.executions(id)).toBe(1);
  await f.stopBridge(b);
});

test('an invalid spec: status Failed listing every problem, a Warning Event InvalidSpec, no workflow; fixing it starts one', async () => {
  const b = await f.bridge();
  const name = uniqueName('cnr');
  // Admission refuses both since the CRD checks what zod checks; a request stored before that
  // (an upgrade) is what the bridge still has to catch.
  const created = await withSpecUnchecked(f.c.config, 'CycleNodeRequest', () =>
    f.createCnr(name, {
      nodeGroupName: GROUP,
      selector: { matchLabels: { 'bad key!': 'x' } },
      healthChecks: [{ endpoint: 'http://{{ .NodeIP }}/healthz', waitPeriod: '1m', regexMatch: '([' }],
    }),
  );
  const obj = await waitStatus(name, 'phase Failed', (o) => o.status?.phase === 'Failed');
  expect(obj.status!.message).toBe(
    'invalid spec: spec.selector.matchLabels.bad key!: label key "bad key!" is not valid: an optional DNS subdomain prefix of at most 253 characters and "/", then a name of 1 to 63 letters, digits, "-", "_" or ".", beginning and ending with a letter or digit; ' +
      'spec.healthChecks[0].regexMatch: "([" is not a regular expression valid in both JavaScript and RE2 (no lookaround, backreferences or inline flags)',
  );
  expect(cond(obj, 'Ready')).toMatchObject({ status: 'False', reason: 'InvalidSpec', message: obj.status!.message });
  expect(obj.status!.workflowId).toBeUndefined();
  expect(obj.metadata.finalizers ?? []).not.toContain(CYCLE_FINALIZER);
  const events = await waitFor('InvalidSpec event', async () => {
    const e = (await f.events(name)).filter((x) => x.reason === 'InvalidSpec');
    return e.length > 0 && e;
  });
  expect(events).toHaveLength(1);
  expect(events[0]).toMatchObject({ type: 'Warning', message: obj.status!.message, involvedObject: { kind: 'CycleNodeRequest', uid: created.metadata.uid } });
  await expect(f.client.workflow.getHandle(cycleWorkflowId(created.metadata)).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);

  // Replays change nothing: no second Event, no status write.
  const writes = b.stats.statusWrites;
  for (let i = 0; i < 3; i++) await f.patchCnr(name, { metadata: { annotations: { 'test/touch': String(i) } } });
  await sleep(1000);
  expect(b.stats.statusWrites).toBe(writes);
  expect((await f.events(name)).filter((x) => x.reason === 'InvalidSpec')).toHaveLength(1);
  expect(b.stats.workflowsStarted).toBe(0);

  // Fixed: the workflow starts for the new generation.
  await f.patchCnr(name, { spec: { selector: { matchLabels: { 'bad key!': null, 'slipway.dev/node-group': GROUP } }, healthChecks: null } });
  const fixed = await started(name);
  expect(fixed.status).toMatchObject({ phase: 'Pending', observedGeneration: 2, workflowId: cycleWorkflowId(created.metadata) });
  expect(fixed.status!.message).not.toContain('invalid');
  expect(fixed.metadata.finalizers).toContain(CYCLE_FINALIZER);
  await f.stopBridge(b);
});

test('deleting a request cancels its workflow and keeps the object until the workflow is closed', async () => {
  const b = await f.bridge();
  const name = uniqueName('cnr');
  const created = await f.createCnr(name, validSpec(GROUP));
  await started(name);
  const id = cycleWorkflowId(created.metadata);
  await f.deleteCnr(name);
  await waitFor('cancel requested', () => historyHas(id, 'workflowExecutionCancelRequestedEventAttributes'));
  // No worker runs the workflow, so it stays open: the object waits, held by the finalizer.
  await sleep(1500);
  const held = await f.getCnr(name);
  expect(held?.metadata.deletionTimestamp).toBeDefined();
  expect(held?.metadata.finalizers).toContain(CYCLE_FINALIZER);
  // The workflow finishes (here: terminated, as if its compensations were done) → the object goes.
  await f.client.workflow.getHandle(id).terminate('test: compensations done');
  await waitFor('object gone', async () => (await f.getCnr(name)) === undefined, { timeoutMs: 10_000 });
  expect(b.stats.cancels).toBe(1);

  // An invalid request never had a workflow (nor the finalizer): it goes at once.
  const bad = uniqueName('cnr');
  // Stored past admission (as an older CRD would have let it in): the bridge must still judge it.
  await withSpecUnchecked(f.c.config, 'CycleNodeRequest', () => f.createCnr(bad, { nodeGroupName: GROUP, selector: { matchLabels: { 'bad key!': 'x' } } }));
  await waitStatus(bad, 'Failed', (o) => o.status?.phase === 'Failed');
  await f.deleteCnr(bad);
  await waitFor('invalid object gone', async () => (await f.getCnr(bad)) === undefined, { timeoutMs: 5000 });
  await f.stopBridge(b);
});

describe('with a scripted cycle workflow on a worker', () => {
  const taskQueue = uniqueName('it-bridge-scripted');
  const T = '2026-01-01T10:00:00Z';
  const node = (nodeName: string, phase: CycleNodeStatus['phase'], extra: Partial<CycleNodeStatus> = {}): CycleNodeStatus => ({
    nodeName,
    phase,
    nodeGroup: GROUP,
    providerID: `kwok://${nodeName}`,
    ...extra,
  });
  const cycle = (phase: CycleStatus['phase'], message: string, nodes: CycleNodeStatus[], nodesCycled = 0, extra: Partial<CycleStatus> = {}): CycleStatus => ({
    phase,
    message,
    nodes,
    nodesCycled,
    nodesTotal: nodes.length,
    startedAt: T,
    ...extra,
  });

  beforeAll(() => f.scriptedWorker(taskQueue));

  test('every phase reaches status within 2 s, with Events, and each node gets a CycleNodeStatus owned by the request', async () => {
    const b = await f.bridge({ taskQueue });
    const name = uniqueName('cnr');
    const created = await f.createCnr(name, { ...validSpec(GROUP), cycleSettings: { method: 'Wait', concurrency: 1 } });
    const id = (await started(name)).status!.workflowId!;
    const h = f.client.workflow.getHandle(id);
    const script: CycleStatus[] = [
      cycle('Initialised', 'selected 2 nodes', [node('n1', 'Pending'), node('n2', 'Pending')]),
      cycle('ScalingUp', 'waiting for 1 replacement', [node('n1', 'Pending'), node('n2', 'Pending')]),
      cycle('CordoningNode', 'draining n1', [
        node('n1', 'DrainingPods', { startedAt: T, timeoutAt: '2026-01-01T13:00:00Z', evicted: 2, drainMessage: 'Drain not completed yet (started at 10:00):\n* Pod ns/a: evicting' }),
        node('n2', 'Pending'),
      ]),
      cycle('WaitingTermination', 'terminating n1', [node('n1', 'TerminatingNode', { startedAt: T, evicted: 3 }), node('n2', 'WaitingPods')]),
      cycle('CordoningNode', 'draining n2', [node('n1', 'Successful', { startedAt: T, evicted: 3 }), node('n2', 'DrainingPods', { message: 'blocked by PDB web' })], 1),
    ];
    const latencies: number[] = [];
    for (const s of script) {
      const t = Date.now();
      await h.signal('scriptStatus', s);
      await waitStatus(name, `${s.phase}: ${s.message}`, (o) => o.status?.phase === s.phase && o.status.message === s.message, 2000);
      latencies.push(Date.now() - t);
    }
    f.logs.push(`phase → status latencies (ms): ${latencies.join(', ')}`);
    const mid = (await f.getCnr(name))!;
    expect(mid.status).toMatchObject({
      nodesCycled: 1,
      nodesTotal: 2,
      startedAt: T,
      nodes: [
        { name: 'n1', phase: 'Successful', nodeGroup: GROUP, providerID: 'kwok://n1' },
        { name: 'n2', phase: 'DrainingPods', message: 'blocked by PDB web' },
      ],
    });
    expect(cond(mid, 'Progressing')).toMatchObject({ status: 'True', reason: 'CordoningNode', message: '1/2 nodes cycled' });

    const statuses = await waitFor('a CycleNodeStatus per node, up to date', async () => {
      const mine = (await f.nodeStatuses()).filter((x) => x.metadata.labels?.[CYCLE_REQUEST_LABEL] === name);
      return mine.length === 2 && mine.find((x) => x.spec?.nodeName === 'n2')?.status?.phase === 'DrainingPods' && mine;
    });
    for (const s of statuses) {
      expect(s.metadata.name).toBe(`${name}-${s.spec!.nodeName}`);
      expect(s.metadata.ownerReferences).toEqual([
        { apiVersion: 'slipway.dev/v1alpha1', kind: 'CycleNodeRequest', name, uid: created.metadata.uid, controller: true },
      ]);
      expect(s.spec).toEqual({ nodeName: s.spec!.nodeName, requestName: name, cycleSettings: { method: 'Wait', concurrency: 1, cyclingTimeout: '3h' } });
    }
    const n1 = statuses.find((x) => x.spec?.nodeName === 'n1')!;
    // n1's drainMessage and timeoutAt went away with its last state (merge patch removed them).
    expect(n1.status).toEqual({ observedGeneration: 1, phase: 'Successful', providerID: 'kwok://n1', nodeGroup: GROUP, startedAt: T, evicted: 3 });

    const final = cycle('Successful', 'cycled 2 nodes', [node('n1', 'Successful'), node('n2', 'Successful')], 2, { completedAt: '2026-01-01T10:30:00Z' });
    await h.signal('scriptFinish', { result: final });
    const done = await waitStatus(name, 'Successful', (o) => o.status?.phase === 'Successful', 5000);
    expect(done.status).toMatchObject({ message: 'cycled 2 nodes', nodesCycled: 2, completedAt: '2026-01-01T10:30:00Z' });
    expect(cond(done, 'Ready')).toMatchObject({ status: 'True', reason: 'Successful' });
    expect(cond(done, 'Progressing')).toMatchObject({ status: 'False', reason: 'Successful' });
    await waitFor('node statuses Successful', async () => {
      const mine = (await f.nodeStatuses()).filter((x) => x.metadata.labels?.[CYCLE_REQUEST_LABEL] === name);
      return mine.every((x) => x.status?.phase === 'Successful') && mine.length === 2;
    });
    const reasons = await waitFor('phase events', async () => {
      const r = await eventReasons(name);
      return r.includes('Normal/PhaseSuccessful') && r;
    });
    for (const p of ['Pending', 'Initialised', 'ScalingUp', 'CordoningNode', 'WaitingTermination', 'Successful']) expect(reasons).toContain(`Normal/Phase${p}`);

    // Closed: nothing more is written (no churn), and deleting the object lets it go at once.
    const writes = b.stats.statusWrites + b.stats.nodeStatusWrites;
    await sleep(1500);
    expect(b.stats.statusWrites + b.stats.nodeStatusWrites).toBe(writes);
    await f.deleteCnr(name);
    await waitFor('object gone', async () => (await f.getCnr(name)) === undefined, { timeoutMs: 10_000 });
    await waitFor('CycleNodeStatus garbage-collected', async () => (await f.nodeStatuses()).every((x) => x.metadata.labels?.[CYCLE_REQUEST_LABEL] !== name), { timeoutMs: 60_000 });
    expect(latencies.every((l) => l < 2000)).toBe(true);
    await f.stopBridge(b);
  });

  test('#24.4 an edit of a request whose workflow has ended is observed (status and conditions), with a SpecChangeRefused Warning', async () => {
    const b = await f.bridge({ taskQueue });
    const name = uniqueName('cnr');
    await f.createCnr(name, validSpec(GROUP));
    const id = (await started(name)).status!.workflowId!;
    await f.client.workflow.getHandle(id).signal('scriptFinish', { result: cycle('Successful', 'cycled 1 node', [node('n1', 'Successful')], 1, { completedAt: T }) });
    await waitStatus(name, 'Successful', (o) => o.status?.phase === 'Successful', 5000);
    await f.patchCnr(name, { spec: { cycleSettings: { concurrency: 3 } } });
    const o = await waitStatus(name, 'generation 2 observed', (x) => x.metadata.generation === 2 && x.status?.observedGeneration === 2 && !!x.status.conditions?.every((c) => c.observedGeneration === 2));
    expect(o.status!.phase).toBe('Successful');
    const warn = await waitFor('SpecChangeRefused', async () => (await f.events(name)).find((e) => e.reason === 'SpecChangeRefused'));
    expect(warn).toMatchObject({ type: 'Warning', message: `generation 2 not applied: workflow ${id} has completed` });
    await f.stopBridge(b);
  });

  test('a failed workflow: phase Failed with its message and a Warning Event', async () => {
    const b = await f.bridge({ taskQueue });
    const name = uniqueName('cnr');
    await f.createCnr(name, validSpec(GROUP));
    const id = (await started(name)).status!.workflowId!;
    const h = f.client.workflow.getHandle(id);
    await h.signal('scriptStatus', cycle('ScalingUp', 'waiting for 1 replacement', [node('n1', 'Pending')]));
    await waitStatus(name, 'ScalingUp', (o) => o.status?.phase === 'ScalingUp', 2000);
    // It marks n1 Failed and fails at once: too fast for a poll; the bridge asks the closed workflow.
    const last = cycle('Healing', 'healing', [node('n1', 'Failed', { message: 'healed: back in its group' })]);
    await h.signal('scriptFinish', { fail: 'replacement for n1 not Ready after 10m', status: last });
    const failed = await waitStatus(name, 'Failed', (o) => o.status?.phase === 'Failed', 5000);
    expect(failed.status!.message).toBe('workflow failed: replacement for n1 not Ready after 10m');
    expect(failed.status!.nodes).toEqual([{ name: 'n1', phase: 'Failed', message: 'healed: back in its group', nodeGroup: GROUP, providerID: 'kwok://n1' }]);
    await waitFor('CycleNodeStatus of n1 Failed', async () => (await f.nodeStatuses()).some((x) => x.spec?.requestName === name && x.status?.phase === 'Failed'));
    expect(cond(failed, 'Ready')).toMatchObject({ status: 'False', reason: 'Failed', message: failed.status!.message });
    expect(failed.status!.completedAt).toBeDefined();
    const warn = await waitFor('PhaseFailed event', async () => (await f.events(name)).find((e) => e.reason === 'PhaseFailed'));
    expect(warn).toMatchObject({ type: 'Warning' });
    expect(warn.message).toContain('workflow failed: replacement for n1 not Ready after 10m');
    await f.stopBridge(b);
  });

  test('deletion while running: the workflow is cancelled, its compensations are mirrored, then the object goes', async () => {
    const b = await f.bridge({ taskQueue });
    const name = uniqueName('cnr');
    await f.createCnr(name, validSpec(GROUP));
    const id = (await started(name)).status!.workflowId!;
    const h = f.client.workflow.getHandle(id);
    await h.signal('scriptStatus', cycle('CordoningNode', 'draining n1', [node('n1', 'DrainingPods')]));
    await waitStatus(name, 'CordoningNode', (o) => o.status?.phase === 'CordoningNode', 2000);
    await f.deleteCnr(name);
    // The scripted workflow compensates for up to 3 s (phase Healing), then ends cancelled.
    const healing = await waitStatus(name, 'Healing while deleting', (o) => o.status?.phase === 'Healing', 3000);
    expect(healing.metadata.deletionTimestamp).toBeDefined();
    await waitFor('object gone', async () => (await f.getCnr(name)) === undefined, { timeoutMs: 15_000 });
    expect((await h.describe()).status.name).toBe('CANCELLED');
    const reasons = await eventReasons(name);
    expect(reasons).toEqual(expect.arrayContaining(['Normal/PhaseHealing', 'Warning/PhaseFailed']));
    await f.stopBridge(b);
  });
});

describe('leader election', () => {
  test('of two bridges only the leader acts; when it stops, the other takes over within 20 s', async () => {
    const leaseName = uniqueName('lease');
    const a = await f.bridge({ leaseName, tag: 'A' });
    await waitFor('A leads', async () => a.isLeader());
    const b = await f.bridge({ leaseName, tag: 'B' });
    await sleep(1500);
    expect(b.isLeader()).toBe(false);

    const one = uniqueName('cnr');
    const created = await f.createCnr(one, validSpec(GROUP));
    await started(one);
    await sleep(1000);
    expect(a.stats.workflowsStarted).toBe(1);
    expect(total(b.stats)).toBe(0); // B wrote nothing at all

    const t = Date.now();
    await f.stopBridge(a); // releases the lease
    await waitFor('B leads', async () => b.isLeader(), { timeoutMs: 20_000 });
    f.logs.push(`takeover after ${Date.now() - t} ms`);
    expect(Date.now() - t).toBeLessThan(20_000);
    const two = uniqueName('cnr');
    await f.createCnr(two, validSpec(GROUP));
    await started(two);
    await f.patchCnr(one, { metadata: { annotations: { 'test/touch': 'after-takeover' } } });
    await sleep(1000);
    expect(b.stats.workflowsStarted).toBe(1); // only `two`: `one` is followed, not restarted
    expect(await f.executions(cycleWorkflowId(created.metadata))).toBe(1);
    await f.stopBridge(b);
  });

  test('a leader that loses its lease stops acting at once, and acts again only once it holds it again', async () => {
    const leaseName = uniqueName('lease');
    const short = { leaseName, leaseDurationSeconds: 4, renewIntervalMs: 1000, renewDeadlineMs: 3000, tag: 'A' };
    const a = await f.bridge(short);
    await waitFor('A leads', async () => a.isLeader());
    // Someone else takes the lease (as if A had been cut off and it had expired).
    const coord = f.c.config.makeApiClient(CoordinationV1Api);
    const lease = await coord.readNamespacedLease({ namespace: f.ns, name: leaseName });
    const now = new V1MicroTime();
    await coord.replaceNamespacedLease({ namespace: f.ns, name: leaseName, body: { ...lease, spec: { ...lease.spec, holderIdentity: 'intruder', renewTime: now, acquireTime: now } } });
    await waitFor('A steps down', async () => !a.isLeader(), { timeoutMs: 3000 });
    const name = uniqueName('cnr');
    await f.createCnr(name, validSpec(GROUP));
    await sleep(1500);
    expect((await f.getCnr(name))!.status?.workflowId).toBeUndefined();
    expect(a.stats.workflowsStarted).toBe(0);
    // The intruder never renews: after the lease duration A takes it back and reconciles.
    await waitFor('A leads again', async () => a.isLeader(), { timeoutMs: 15_000 });
    await started(name);
    expect(a.stats.workflowsStarted).toBe(1);
    await f.stopBridge(a);
  });
});

describe('resilience of the watch', () => {
  test('an apiserver outage (connections dropped, port closed for 3 s) is survived: requests created meanwhile are picked up', async () => {
    const proxy = new ApiserverProxy(new URL(f.c.config.getCurrentCluster()!.server));
    await proxy.start();
    try {
      const kube = kubeFrom(kubeConfigVia(proxy.url));
      const b = await f.bridge({ kube, leaseName: uniqueName('lease'), tag: 'proxied' });
      await waitFor('leads', async () => b.isLeader());
      const before = uniqueName('cnr');
      await f.createCnr(before, validSpec(GROUP));
      await started(before);
      const outage = proxy.outage(3000);
      await sleep(500);
      const during = uniqueName('cnr');
      await f.createCnr(during, validSpec(GROUP)); // through the tests' own client, not the proxy
      await outage;
      await waitStatus(during, 'workflow started after the outage', (o) => Boolean(o.status?.workflowId), 30_000);
      expect(b.isLeader()).toBe(true); // 3 s < renew deadline: it kept the lease
      expect(b.stats.workflowsStarted).toBe(2);
      await f.stopBridge(b);
    } finally {
      await proxy.stop();
    }
  });

  test('a watch from a resourceVersion too old (410 Gone) relists and carries on', async () => {
    const { group, version, plural } = CYCLE_NODE_REQUEST;
    const abort = new AbortController();
    let lists = 0;
    const seen = new Set<string>();
    const logs: string[] = [];
    const run = runReflector<CycleNodeRequestObject>({
      kc: f.c.config,
      path: `/apis/${group}/${version}/namespaces/${f.ns}/${plural}`,
      list: async (p) => {
        lists++;
        const page = (await f.custom.listNamespacedCustomObject({ group, version, plural, namespace: f.ns, ...p })) as { items: CycleNodeRequestObject[]; metadata: { resourceVersion: string } };
        // The first list claims a long-compacted version: the watch from it gets 410 Gone.
        return lists === 1 ? { ...page, metadata: { resourceVersion: '2' } } : page;
      },
      onSync: (items) => items.forEach((i) => seen.add(i.metadata.name)),
      onEvent: (_t, o) => seen.add(o.metadata.name),
      signal: abort.signal,
      log: (l) => logs.push(l),
      watchTimeoutSeconds: 2,
    });
    try {
      await waitFor('relisted', async () => lists >= 2, { timeoutMs: 10_000 });
      const name = uniqueName('cnr');
      await f.createCnr(name, validSpec(GROUP));
      await waitFor('new object seen by the watch', async () => seen.has(name), { timeoutMs: 10_000 });
      // Several server-side watch timeouts (2 s) later it still delivers.
      await sleep(4500);
      const later = uniqueName('cnr');
      await f.createCnr(later, validSpec(GROUP));
      await waitFor('object seen after watch timeouts', async () => seen.has(later), { timeoutMs: 10_000 });
      expect(lists).toBe(2); // timeouts resume from the last version; only the 410 relisted
    } finally {
      abort.abort();
      await run;
    }
  });
});

describe('end to end with the real cycle workflow', () => {
  test('a request for a kwok node group is cycled by the worker; the bridge mirrors it to Successful with a CycleNodeStatus per node', async () => {
    await f.cycleWorker('it-bridge-e2e', 2, async ({ group, taskQueue: tq, old }) => {
      await f.bridge({ taskQueue: tq });
      const name = uniqueName('cnr');
      const created = await f.createCnr(name, {
        nodeGroupName: group,
        provider: 'kwok',
        selector: { matchLabels: { [NODE_GROUP_LABEL]: group } },
        cycleSettings: { concurrency: 1 },
      });
      // Every phase the object shows, in order (fast phases may be skipped between two looks).
      const seen: string[] = [];
      const done = await waitFor(
        'request closed',
        async () => {
          const o = await f.getCnr(name);
          const p = o?.status?.phase;
          if (p && seen.at(-1) !== p) seen.push(p);
          return (p === 'Successful' || p === 'Failed') && o?.status?.completedAt ? o : undefined;
        },
        { timeoutMs: 180_000, intervalMs: 100 },
      );
      f.logs.push(`e2e phases seen: ${seen.join(' → ')}`);
      expect([done.status!.phase, done.status!.message]).toEqual(['Successful', done.status!.message]);
      expect(done.status).toMatchObject({ nodesCycled: 2, nodesTotal: 2, workflowId: cycleWorkflowId(created.metadata) });
      expect(done.status!.nodes!.map((n) => [n.name, n.phase, n.nodeGroup, n.providerID]).sort()).toEqual(
        old.map((n) => [n, 'Successful', group, `kwok://${n}`]).sort(),
      );
      expect(cond(done, 'Ready')).toMatchObject({ status: 'True', reason: 'Successful' });
      const order = ['Pending', 'Initialised', 'ScalingUp', 'CordoningNode', 'WaitingTermination', 'Successful'];
      expect(seen.at(-1)).toBe('Successful');
      expect(seen.every((p) => order.includes(p))).toBe(true);
      const statuses = await waitFor('CycleNodeStatus Successful for both nodes', async () => {
        const mine = (await f.nodeStatuses()).filter((x) => x.spec?.requestName === name);
        return mine.length === 2 && mine.every((x) => x.status?.phase === 'Successful') && mine;
      });
      expect(statuses.map((x) => x.metadata.name).sort()).toEqual(old.map((n) => cycleNodeStatusName(name, n)).sort());
      for (const x of statuses) expect(x.status).toMatchObject({ providerID: `kwok://${x.spec!.nodeName}`, nodeGroup: group });
      expect(await eventReasons(name)).toContain('Normal/PhaseSuccessful');
      await f.deleteCnr(name);
      await waitFor('object gone', async () => (await f.getCnr(name)) === undefined, { timeoutMs: 10_000 });
    });
  }, 240_000);
});

describe('editing a running request', () => {
  test('a concurrency edit reaches the running cycle (Event, observedGeneration); any other edit is refused by the API and by the workflow', async () => {
    // The replacements' health check holds the first batch in ScalingUp until the edits are done.
    let healthy = false;
    const gate = createServer((_req, res) => {
      res.statusCode = healthy ? 200 : 503;
      res.end();
    });
    await new Promise<void>((r) => gate.listen(0, '127.0.0.1', r));
    const endpoint = `http://127.0.0.1:${(gate.address() as AddressInfo).port}/healthz`;
    await f.cycleWorker('it-bridge-edit', 6, async ({ group, taskQueue: tq, old }) => {
      await f.bridge({ taskQueue: tq });
      const name = uniqueName('cnr');
      const spec = {
        nodeGroupName: group,
        provider: 'kwok',
        selector: { matchLabels: { [NODE_GROUP_LABEL]: group } },
        cycleSettings: { concurrency: 1 },
        healthChecks: [{ endpoint, waitPeriod: '2m' }],
        skipInitialHealthChecks: true,
      };
      const created = await f.createCnr(name, spec);
      const workflowId = cycleWorkflowId(created.metadata);
      await waitStatus(name, 'the first batch waiting for healthy replacements', (o) => o.status?.phase === 'ScalingUp', 60_000);

      // Anything but concurrency: refused at admission, naming the field.
      await expect(f.patchCnr(name, { spec: { selector: { matchLabels: { [NODE_GROUP_LABEL]: 'elsewhere' } } } })).rejects.toThrow(/spec.selector cannot change once the cycle has started/);
      await expect(f.patchCnr(name, { spec: { cycleSettings: { method: 'Wait' } } })).rejects.toThrow(/spec.cycleSettings.method cannot change/);
      // ...and by the workflow itself, for a client that bypasses the CRD.
      const parsed = CycleNodeRequestSpec.parse(spec);
      await expect(
        f.client.workflow.getHandle(workflowId).executeUpdate(specChangedUpdate, { args: [{ spec: { ...parsed, nodeNames: [old[0]!] } }] }),
      ).rejects.toThrow(WorkflowUpdateFailedError);

      await f.patchCnr(name, { spec: { cycleSettings: { concurrency: 3 } } });
      const applied = await waitStatus(name, 'generation 2 observed', (o) => o.status?.observedGeneration === 2, 20_000);
      expect(applied.metadata.generation).toBe(2);
      expect(await eventReasons(name)).toContain('Normal/SpecChanged');
      expect((await f.events(name)).find((e) => e.reason === 'SpecChanged')?.message).toContain('concurrency 3');
      expect((await f.client.workflow.getHandle(workflowId).query(cycleStatusQuery)).concurrency).toBe(3);
      healthy = true;

      const done = await waitStatus(name, 'Successful', (o) => o.status?.phase === 'Successful', 180_000);
      expect(done.status!.nodesCycled).toBe(6);
      // Batches after the edit took up to 3 nodes: fewer child-start batches than nodes.
      const history = await f.client.workflow.getHandle(workflowId).fetchHistory();
      const detaches = history.events!.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'detachNodes').length;
      expect(detaches).toBeLessThan(6);
    }).finally(() => gate.close());
  }, 240_000);
});

test('the trust boundary: with SLIPWAY_ALLOWED_NAMESPACES not naming its namespace, a valid request is refused with a NamespaceNotAllowed Event and starts no workflow', async () => {
  await f.bridge({ allowedNamespaces: ['slipway-ops'] });
  const name = uniqueName('cnr');
  const created = await f.createCnr(name, validSpec(GROUP));
  const obj = await waitStatus(name, 'phase Failed', (o) => o.status?.phase === 'Failed');
  expect(obj.status!.message).toBe(`namespace ${f.ns} is not one this bridge may act for (SLIPWAY_ALLOWED_NAMESPACES: slipway-ops): no node is touched`);
  expect(obj.metadata.finalizers ?? []).not.toContain(CYCLE_FINALIZER);
  const events = await waitFor('NamespaceNotAllowed event', async () => {
    const e = (await f.events(name)).filter((x) => x.reason === 'NamespaceNotAllowed');
    return e.length > 0 && e;
  });
  expect(events[0]).toMatchObject({ type: 'Warning', involvedObject: { kind: 'CycleNodeRequest', uid: created.metadata.uid } });
  await expect(f.client.workflow.getHandle(cycleWorkflowId(created.metadata)).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
});
