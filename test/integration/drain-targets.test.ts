// The drain's targets mode on the local stack (what a NodeMaintenance's node coordinator drives):
// only pods matching the drain-target lanes are evicted, read from the apiserver's audit log; newer
// targets arrive by signal; a DaemonSet pod is never evicted (Kept, NM-6.7). The drain's reports go
// to a workflow that no worker runs: it stays open and its history keeps every signal.
import { SchedulingV1Api } from '@kubernetes/client-node';
import { defaultPayloadConverter } from '@temporalio/common';
import { MAX_PRIORITY, type Lane } from '../../api/drain-plan.js';
import { drainWorkflow } from '../../workflows/index.js';
import { drainStatusQuery, drainTargetsSignal, type DrainReport } from '../../workflows/messages.js';
import { uniqueName } from '../support/cluster.js';
import { DrainFixture, evictionsOf, removalsOf } from '../support/drain.js';
import { waitFor } from '../support/wait.js';

const ts = (e: { requestReceivedTimestamp: string }) => new Date(e.requestReceivedTimestamp).getTime();
const D = (podPriority: number): Lane => ({ podType: 'Default', podPriority });

describe('a drain in targets mode', () => {
  const f = new DrainFixture('it-targets');
  const scheduling = f.c.config.makeApiClient(SchedulingV1Api);
  const classes = { low: `${f.group}-low`, high: `${f.group}-high` };
  const receiverId = uniqueName('it-targets-reports');
  beforeAll(async () => {
    await f.setup();
    await scheduling.createPriorityClass({ body: { metadata: { name: classes.low }, value: 100 } });
    await scheduling.createPriorityClass({ body: { metadata: { name: classes.high }, value: 5000 } });
  });
  afterAll(async () => {
    await f.client?.workflow.getHandle(receiverId).terminate('test done').catch(() => undefined);
    for (const name of Object.values(classes)) await scheduling.deletePriorityClass({ name }).catch(() => undefined);
    await f.teardown();
  });

  const reports = async (): Promise<DrainReport[]> => {
    const h = await f.client.workflow.getHandle(receiverId).fetchHistory();
    return h.events!.flatMap((e) => {
      const s = e.workflowExecutionSignaledEventAttributes;
      return s?.signalName === 'drainProgress' ? [defaultPayloadConverter.fromPayload<DrainReport>(s.input!.payloads![0]!)] : [];
    });
  };

  test('targets [Default ≤ 1000] evict only the low-priority pod; then [Default ≤ MAX, DaemonSet ≤ MAX] final evict the rest, keep the DaemonSet pod, and end Drained', async () => {
    const deploy = async (name: string, priorityClassName: string) => {
      const t = f.podTemplate({ app: name }, 1);
      await f.c.apps.createNamespacedDeployment({
        namespace: f.ns,
        body: { metadata: { name }, spec: { replicas: 1, selector: { matchLabels: { app: name } }, template: { ...t, spec: { ...t.spec, priorityClassName } } } },
      });
    };
    await deploy('low', classes.low);
    await deploy('high', classes.high);
    await f.c.apps.createNamespacedDaemonSet({
      namespace: f.ns,
      body: { metadata: { name: 'agent' }, spec: { selector: { matchLabels: { app: 'agent' } }, template: f.podTemplate({ app: 'agent' }) } },
    });
    await f.waitRunning(3);
    await f.addSpare();
    await f.client.workflow.start('reportReceiver', { taskQueue: `${receiverId}-nobody`, workflowId: receiverId, args: [] });

    const h = await f.client.workflow.start(drainWorkflow, {
      taskQueue: f.taskQueue,
      workflowId: uniqueName('nm-node-drain'),
      args: [{ nodeName: f.node, reportTo: receiverId, targets: { lanes: [D(1000)], final: false, seq: 1 } }],
    });
    const done1 = await waitFor('finished at targets #1', async () => (await reports()).find((r) => r.targetsSeq === 1 && r.finished), { timeoutMs: 30_000 });
    // The low pod has left; high (untargeted) and agent (no DaemonSet lane yet) wait.
    expect(done1.counts).toEqual({ podsPendingEvictionRequest: 2, activeEvictionRequests: 0, podsBlocked: 0, podsKept: 0 });
    expect((await h.query(drainStatusQuery)).phase).toBe('Draining');
    const first = evictionsOf(await f.audit()).map((e) => e.objectRef!.name!);
    expect(first).toHaveLength(1);
    expect(first[0]).toMatch(/^low-/);
    const onNode = async () => (await f.pods()).filter((p) => p.spec?.nodeName === f.node && !p.metadata?.deletionTimestamp).map((p) => p.metadata!.labels!.app).sort();
    expect(await onNode()).toEqual(['agent', 'high']);

    await h.signal(drainTargetsSignal, { lanes: [D(MAX_PRIORITY), { podType: 'DaemonSet', podPriority: MAX_PRIORITY }], final: true, seq: 2 });
    const result = await h.result();
    expect(result.status).toMatchObject({ phase: 'Drained', evicted: 2, finished: true });
    expect(result.status.skipped).toContainEqual({ pod: expect.stringMatching(new RegExp(`^${f.ns}/agent-`)), reason: 'DaemonSet pod without evacuator: left for node shutdown' });

    const audit = await f.audit();
    const evictions = evictionsOf(audit);
    expect(evictions.map((e) => e.objectRef!.name!.split('-')[0])).toEqual(['low', 'high']);
    // high was evicted only after the second targets, so after low had left the node.
    const lowGone = removalsOf(audit).find((e) => e.objectRef!.name!.startsWith('low-'))!;
    expect(ts(evictions[1]!)).toBeGreaterThanOrEqual(ts(lowGone));
    expect(await onNode()).toEqual(['agent']);
    const last = await waitFor('the drained report', async () => (await reports()).find((r) => r.drained), { timeoutMs: 10_000 });
    expect(last).toMatchObject({ targetsSeq: 2, finished: true, counts: { podsPendingEvictionRequest: 0, activeEvictionRequests: 0, podsBlocked: 0, podsKept: 1 } });
  });
});
