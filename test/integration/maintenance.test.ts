// NodeMaintenance end to end on the local stack: the maintenance workflow, the node coordinators and
// the drain engine in targets mode, judged from the apiserver's audit log and the objects.
// Tests are named after the spec statements (../shared/specs/node-maintenance.md).
import { HELD_BY_ANNOTATION, MAINTENANCE_STATE_LABEL, MAINTENANCE_STATUS_ANNOTATION, WAS_UNSCHEDULABLE_ANNOTATION } from '../../api/node-maintenance.js';
import { mergePatch } from '../../kube/patch.js';
import { maintenanceStatusQuery, retryNowSignal, setStageUpdate } from '../../workflows/messages.js';
import { maintenanceNodeWorkflowId } from '../../workflows/ids.js';
import { MaintenanceFixture } from '../support/maintenance.js';
import { waitFor } from '../support/wait.js';

const selectNodes = (...names: string[]) => ({ nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name' as const, operator: 'In' as const, values: names }] }] });
const D = (podPriority: number, podSelector?: { matchLabels: Record<string, string> }) => ({ podType: 'Default' as const, podPriority, ...(podSelector ? { podSelector } : {}) });
const podOf = (e: { objectRef?: { name?: string } }) => e.objectRef!.name!.replace(/-[a-z0-9]+-[a-z0-9]+$/, '');

describe('one maintenance (E1)', () => {
  const f = new MaintenanceFixture('it-nm-one');
  beforeAll(() => f.setup(2), 60_000);
  afterAll(() => f.teardown(), 60_000);

  test('NM-3.1 T(N) walks the plan: each entry\'s pods leave only after the lower entry\'s are gone; NM-2.3 finalizer first; NM-2.7 Drained; NM-6.5 no extra taint; NM-3.6 the node annotation carries T(N); NM-2.9 Complete uncordons; NM-2.10 and undoes nothing', async () => {
    const [five, other] = f.nodes as [string, string];
    await f.pod('web', five, 0);
    await f.pod('pg', five, 1500, { db: 'postgres' });
    await f.pod('cache', five, 1500, { db: 'redis' });
    await f.pod('big', five, 1000000000);
    await f.pod('bystander', other, 0);
    await f.waitRunning(5);
    const taintsBefore = ((await f.c.core.readNode({ name: five })).spec?.taints ?? []).map((t) => t.key);
    const h = await f.create(`${f.group}-m`, { nodeSelector: selectNodes(five), stage: 'Drain', drainPlan: [D(1000), D(2000, { matchLabels: { db: 'postgres' } })] });

    const drained = await f.statusWhen(h, 'Drained', (s) => s.conditions.some((c) => c.type === 'Drained' && c.status === 'True'), 120_000);
    expect(drained.stageStatuses.map((s) => s.name)).toEqual(['Drain']);
    expect(drained.nodeStatuses.map((n) => [n.nodeRef.name, n.drainMessage])).toEqual([[five, 'Drained']]);
    expect(drained.drainStatus.drainMessage).toBe('Drained');

    const audit = await f.audit();
    const ev = (await f.evictions()).map(podOf);
    expect(ev.filter((p) => p !== 'web' && p !== 'pg').sort()).toEqual(['big', 'cache']);
    expect(ev.slice(0, 2)).toEqual(['web', 'pg']);
    // Each entry waits for the lower one's pods to be deleted (kwok deletes at the grace deadline).
    const at = (pred: (e: (typeof audit)[number]) => boolean) => audit.findIndex(pred);
    const evicted = (p: string) => at((e) => e.objectRef?.subresource === 'eviction' && e.responseStatus?.code === 201 && podOf(e) === p);
    const deleted = (p: string) => at((e) => e.objectRef?.resource === 'pods' && !e.objectRef.subresource && e.verb === 'delete' && e.objectRef.namespace === f.ns && podOf(e) === p && /kwok/.test(e.userAgent ?? ''));
    expect(deleted('web')).toBeGreaterThan(-1);
    expect(evicted('pg')).toBeGreaterThan(deleted('web'));
    expect(evicted('cache')).toBeGreaterThan(deleted('pg'));
    expect(evicted('big')).toBeGreaterThan(deleted('pg'));
    // The bystander on the unselected node was never touched.
    expect(ev).not.toContain('bystander');

    // NM-2.3: the finalizer was written before the first node write of the maintenance.
    const finalizerAt = at((e) => e.objectRef?.resource === 'nodemaintenances' && e.verb === 'update' && e.responseStatus?.code === 200);
    const nodeWriteAt = at((e) => e.objectRef?.resource === 'nodes' && e.objectRef.name === five && !e.objectRef.subresource && e.verb === 'patch' && !/kube-controller-manager|kwok/.test(e.userAgent ?? ''));
    expect(finalizerAt).toBeGreaterThan(-1);
    expect(nodeWriteAt).toBeGreaterThan(finalizerAt);

    // NM-6.1: the node shows it.
    const node = await f.c.core.readNode({ name: five });
    expect(node.spec?.unschedulable).toBe(true);
    expect(node.metadata?.labels?.[MAINTENANCE_STATE_LABEL]).toBe('Drained');
    expect(node.metadata?.annotations?.[HELD_BY_ANNOTATION]).toBe(`${f.group}-m`);
    expect((await f.c.core.readNode({ name: other })).spec?.unschedulable).toBeFalsy();
    // NM-6.5: no taint beyond the one spec.unschedulable brings (added by the node lifecycle controller).
    expect((node.spec?.taints ?? []).map((t) => t.key).filter((k) => !taintsBefore.includes(k) && k !== 'node.kubernetes.io/unschedulable')).toEqual([]);
    // NM-3.6 / NM-6.3: the node's status annotation carries the same T(N) as the maintenance's nodeStatuses.
    const annotated = JSON.parse(node.metadata?.annotations?.[MAINTENANCE_STATUS_ANNOTATION] ?? '{}') as { drainTargets?: unknown };
    expect(annotated.drainTargets).toEqual(drained.nodeStatuses[0]!.drainTargets);
    expect(drained.nodeStatuses[0]!.drainTargets.length).toBeGreaterThan(0);

    // NM-2.9: Complete uncordons and removes every trace; the workflow ends.
    const completeAt = Date.now();
    await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    const done = await h.result();
    // NM-2.10: Complete undoes nothing and evicts nothing: from then on no pod of the namespace is
    // written but by the cluster's own components (the Deployments' replacements are theirs; no
    // evicted pod is put back, none is evicted or deleted).
    const afterComplete = (await f.audit()).filter((e) => new Date(e.requestReceivedTimestamp).getTime() >= completeAt && e.objectRef?.resource === 'pods' && e.objectRef.namespace === f.ns);
    expect(afterComplete.filter((e) => !/kube-controller-manager|kube-scheduler|kwok/.test(e.userAgent ?? '')).map((e) => `${e.verb} ${e.objectRef?.subresource ?? ''} ${e.objectRef?.name}`)).toEqual([]);
    expect((await f.evictions()).length).toBe(ev.length);
    expect(done.completed).toBe(true);
    expect(done.conditions.find((c) => c.type === 'Drained')).toMatchObject({ status: 'True' });
    const after = await f.c.core.readNode({ name: five });
    expect(after.spec?.unschedulable).toBeFalsy();
    expect(Object.keys({ ...after.metadata?.labels, ...after.metadata?.annotations }).filter((k) => k.startsWith('maintenance.slipway.dev/'))).toEqual([]);
    expect((await f.object(`${f.group}-m`)).spec.stage).toBe('Complete');
  }, 200_000);
});

describe('two intersecting maintenances (E2)', () => {
  const f = new MaintenanceFixture('it-nm-two');
  beforeAll(() => f.setup(3), 60_000);
  afterAll(() => f.teardown(), 60_000);

  test('NM-3.2 the lowest frontier decides on a shared node; a maintenance does not advance while one of its nodes has a targeted pod left (PDB); relaxing it lets both finish', async () => {
    const [one, two, three] = f.nodes as [string, string, string];
    await f.pod('p1', one, 4000);
    await f.pod('p2', one, 8000);
    await f.pod('q1', two, 5000);
    await f.pod('r1', three, 9000);
    await f.pod('r2', three, 11000);
    await f.waitRunning(5);
    await f.c.policy.createNamespacedPodDisruptionBudget({ namespace: f.ns, body: { metadata: { name: 'q1' }, spec: { maxUnavailable: 0, selector: { matchLabels: { app: 'q1' } } } } });
    await waitFor('PDB q1 computed', async () => (await f.c.policy.readNamespacedPodDisruptionBudget({ name: 'q1', namespace: f.ns })).status?.observedGeneration === 1);
    const a = await f.create(`${f.group}-a`, { nodeSelector: selectNodes(one, two), stage: 'Drain', drainPlan: [D(5000), D(15000)] });
    await f.waitHeld(one, `${f.group}-a`); // a sets T(one) first (targets never shrink, NM-3.3)
    const b = await f.create(`${f.group}-b`, { nodeSelector: selectNodes(one, three), stage: 'Drain', drainPlan: [D(10000), D(15000)] });

    // t1: p1 and r1 go; q1 is refused; r2 (11000) waits although b alone would let it go at D≤15000 after r1.
    await waitFor('p1 and r1 evicted', async () => {
      const ev = (await f.evictions()).map(podOf);
      return ev.includes('p1') && ev.includes('r1');
    });
    const sa = await f.statusWhen(a, 'a waits on q1', (s) => s.nodeStatuses.some((n) => n.nodeRef.name === two && n.podsBlocked === 1));
    expect(sa.nodeStatuses.find((n) => n.nodeRef.name === two)!.drainMessage).toContain('q1');
    await new Promise((r) => setTimeout(r, 15_000));
    expect((await f.evictions()).map(podOf).sort()).toEqual(['p1', 'r1']);
    const sb = await f.statusWhen(b, 'b waits for a', (s) => s.drainStatus.drainMessage === `Waiting for ${f.group}-a.`);
    expect(sb.nodeStatuses.find((n) => n.nodeRef.name === one)!.drainMessage).toBe(`Waiting for ${f.group}-a.`);

    // The PDB relaxed: everything goes, p2 after q1's deletion, and both end Drained.
    await f.c.policy.deleteNamespacedPodDisruptionBudget({ name: 'q1', namespace: f.ns });
    for (const h of [a, b]) await f.statusWhen(h, 'Drained', (s) => s.conditions.some((c) => c.type === 'Drained' && c.status === 'True'), 150_000);
    const audit = await f.audit();
    const at = (pred: (e: (typeof audit)[number]) => boolean) => audit.findIndex(pred);
    const qGone = at((e) => e.objectRef?.resource === 'pods' && e.verb === 'delete' && !e.objectRef.subresource && e.objectRef.namespace === f.ns && podOf(e) === 'q1');
    const p2Evicted = at((e) => e.objectRef?.subresource === 'eviction' && e.responseStatus?.code === 201 && podOf(e) === 'p2');
    expect(qGone).toBeGreaterThan(-1);
    expect(p2Evicted).toBeGreaterThan(qGone);
    expect((await f.evictions()).map(podOf).sort()).toEqual(['p1', 'p2', 'q1', 'r1', 'r2']);
    for (const h of [a, b]) await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await Promise.all([a.result(), b.result()]);
    for (const n of [one, two, three]) expect((await f.c.core.readNode({ name: n })).spec?.unschedulable).toBeFalsy();
  }, 300_000);
});

describe('cordon-only overlap, re-cordon and restore (E4)', () => {
  const f = new MaintenanceFixture('it-nm-e4');
  beforeAll(() => f.setup(4), 60_000);
  afterAll(() => f.teardown(), 60_000);

  test('NM-2.5 an uncordon is reverted; NM-2.9(c) Complete restores each node unless another holds it or it was cordoned before; NM-2.6 membership follows the labels', async () => {
    const [x, y, z, w] = f.nodes as [string, string, string, string];
    const pool = `${f.group}-pool`;
    const label = async (node: string, value: string | null) => f.c.core.patchNode({ name: node, body: { metadata: { labels: { [pool]: value } } } }, mergePatch);
    for (const n of [x, y, z]) await label(n, 'm1');
    await f.c.core.patchNode({ name: z, body: { spec: { unschedulable: true } } }, mergePatch); // an admin's cordon, before
    const bySelector = { nodeSelectorTerms: [{ matchExpressions: [{ key: pool, operator: 'In' as const, values: ['m1'] }] }] };
    const m1 = await f.create(`${f.group}-m1`, { nodeSelector: bySelector, stage: 'Cordon' });
    const m2 = await f.create(`${f.group}-m2`, { nodeSelector: selectNodes(y), stage: 'Drain' });
    const node = (n: string) => f.c.core.readNode({ name: n });
    await waitFor('x, y, z held, y by both', async () => {
      const all = await Promise.all([x, y, z].map(node));
      return all.every((n) => n.spec?.unschedulable && n.metadata?.annotations?.[HELD_BY_ANNOTATION]) && all[1]!.metadata?.annotations?.[HELD_BY_ANNOTATION] === `${f.group}-m1,${f.group}-m2`;
    });
    expect((await node(z)).metadata?.annotations?.[WAS_UNSCHEDULABLE_ANNOTATION]).toBe('true');
    expect((await node(y)).metadata?.annotations?.[HELD_BY_ANNOTATION]).toBe(`${f.group}-m1,${f.group}-m2`);

    // NM-2.5: kubectl uncordon y (once m2 has drained it) is reverted promptly, with a Warning Event on the node.
    await f.statusWhen(m2, 'm2 Drained', (s) => s.conditions.some((c) => c.type === 'Drained' && c.status === 'True'));
    await f.c.core.patchNode({ name: y, body: { spec: { unschedulable: null } } }, mergePatch);
    await waitFor('y cordoned again', async () => (await node(y)).spec?.unschedulable === true, { timeoutMs: 15_000 });
    await waitFor('UncordonReverted on y', async () => {
      const ev = await f.c.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${y},reason=UncordonReverted` });
      return ev.items.length > 0;
    });

    // NM-2.6: a node that starts to match is taken; one that stops matching is released.
    await label(w, 'm1');
    await waitFor('w taken', async () => (await node(w)).spec?.unschedulable === true, { timeoutMs: 30_000 });
    await label(w, null);
    await waitFor('w released', async () => !(await node(w)).spec?.unschedulable && !(await node(w)).metadata?.annotations?.[HELD_BY_ANNOTATION], { timeoutMs: 30_000 });

    // Complete m1: x uncordoned, y stays (m2 holds it), z stays (cordoned before).
    await m1.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await m1.result();
    expect((await node(x)).spec?.unschedulable).toBeFalsy();
    expect((await node(y)).spec?.unschedulable).toBe(true);
    expect((await node(y)).metadata?.annotations?.[HELD_BY_ANNOTATION]).toBe(`${f.group}-m2`);
    expect((await node(z)).spec?.unschedulable).toBe(true);
    expect((await node(z)).metadata?.annotations?.[HELD_BY_ANNOTATION]).toBeUndefined();

    await m2.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await m2.result();
    const yAfter = await node(y);
    expect(yAfter.spec?.unschedulable).toBeFalsy();
    expect(Object.keys({ ...yAfter.metadata?.labels, ...yAfter.metadata?.annotations }).filter((k) => k.startsWith('maintenance.slipway.dev/'))).toEqual([]);
  }, 200_000);
});

describe('a node whose drain fails (podEvictionTimeout policy Fail)', () => {
  const f = new MaintenanceFixture('it-nm-fail');
  beforeAll(() => f.setup(1), 60_000);
  afterAll(() => f.teardown(), 60_000);

  test('NM-7.4 Ready=False DrainFailed names the node and the pod, the node stays cordoned and the plan does not advance; retryNow to the node coordinator resumes it', async () => {
    const [n] = f.nodes as [string];
    await f.pod('db', n, 100);
    await f.waitRunning(1);
    await f.c.policy.createNamespacedPodDisruptionBudget({ namespace: f.ns, body: { metadata: { name: 'db' }, spec: { maxUnavailable: 0, selector: { matchLabels: { app: 'db' } } } } });
    await waitFor('PDB db computed', async () => (await f.c.policy.readNamespacedPodDisruptionBudget({ name: 'db', namespace: f.ns })).status?.observedGeneration === 1);
    const h = await f.create(`${f.group}-m`, { nodeSelector: selectNodes(n), stage: 'Drain', drain: { podEvictionTimeout: { after: '2s', policy: 'Fail' } } });
    const failed = await f.statusWhen(h, 'DrainFailed', (s) => s.conditions.some((c) => c.type === 'Ready' && c.reason === 'DrainFailed'), 60_000);
    expect(failed.conditions.find((c) => c.type === 'Ready')!.message).toContain(`node ${n}`);
    expect(failed.conditions.find((c) => c.type === 'Ready')!.message).toContain('db');
    expect(failed.nodeStatuses[0]!.drainMessage).toMatch(/^Drain failed: /);
    expect(failed.planIndex).toBe(0);
    await new Promise((r) => setTimeout(r, 3000));
    expect((await f.c.core.readNode({ name: n })).spec?.unschedulable).toBe(true);
    expect((await h.query(maintenanceStatusQuery)).conditions.find((c) => c.type === 'Ready')!.reason).toBe('DrainFailed');

    await f.c.policy.deleteNamespacedPodDisruptionBudget({ name: 'db', namespace: f.ns });
    await f.client.workflow.getHandle(maintenanceNodeWorkflowId(n)).signal(retryNowSignal);
    await f.statusWhen(h, 'Drained after retryNow', (s) => s.conditions.some((c) => c.type === 'Drained' && c.status === 'True'), 90_000);
    expect((await f.evictions()).map(podOf)).toContain('db');
    await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await h.result();
  }, 200_000);
});

describe('#26.1 idle costs nothing: the held-nodes feed instead of a watch per held node', () => {
  const f = new MaintenanceFixture('it-nm-261');
  beforeAll(() => f.setup(1), 60_000);
  afterAll(() => f.teardown(), 60_000);

  test('#26.1 a held node\'s coordinator runs no activity while nothing changes; an uncordon is reverted on the feed\'s nodeChanged signal (NM-2.5)', async () => {
    const [x] = f.nodes as [string];
    const m = await f.create(`${f.group}-m`, { nodeSelector: selectNodes(x), stage: 'Cordon' });
    const node = () => f.c.core.readNode({ name: x });
    await waitFor('x held', async () => {
      const n = await node();
      return n.spec?.unschedulable === true && n.metadata?.annotations?.[HELD_BY_ANNOTATION] === `${f.group}-m`;
    });
    const coordinator = f.client.workflow.getHandle(maintenanceNodeWorkflowId(x));
    await waitFor('its reports sent', async () => !((await coordinator.describe()).raw.pendingActivities ?? []).some((a) => a.activityType?.name !== 'watchMaintenanceNode'));
    // Before #26.1 a heartbeating watchMaintenanceNode ran for as long as the node was held.
    expect(((await coordinator.describe()).raw.pendingActivities ?? []).map((a) => a.activityType?.name)).toEqual([]);

    await f.c.core.patchNode({ name: x, body: { spec: { unschedulable: null } } }, mergePatch);
    await waitFor('x cordoned again', async () => (await node()).spec?.unschedulable === true, { timeoutMs: 15_000 });
    const signals = ((await coordinator.fetchHistory()).events ?? []).flatMap((e) => e.workflowExecutionSignaledEventAttributes?.signalName ?? []);
    expect(signals).toContain('nodeChanged');
    expect(f.feedStats.nodeSignals).toBeGreaterThanOrEqual(1);

    await m.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await m.result();
    expect((await node()).spec?.unschedulable).toBeFalsy();
  }, 120_000);
});
