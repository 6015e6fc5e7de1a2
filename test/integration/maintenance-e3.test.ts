// The spec's worked example E3 (fast-forward and late pods) and NM-2.8 (pods that appear on a
// covered node; controllers whose pods keep coming back) end to end on the local stack, judged
// from the apiserver's audit log and the maintenances' status, as E1/E2 are (maintenance.test.ts).
import { entryString } from '../../api/drain-plan.js';
import { setStageUpdate } from '../../workflows/messages.js';
import type { MaintenanceStatus } from '../../workflows/maintenance/types.js';
import { MaintenanceFixture, appOf } from '../support/maintenance.js';
import { waitFor } from '../support/wait.js';
import type { AuditEvent } from '../support/cluster.js';
import { POD_TYPE_LABEL } from '../../api/drain-plan.js';

const selectNodes = (...names: string[]) => ({ nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name' as const, operator: 'In' as const, values: names }] }] });
const D = (podPriority: number) => ({ podType: 'Default' as const, podPriority });
const podOf = (e: AuditEvent) => appOf(e.objectRef?.name);
const drained = (s: MaintenanceStatus) => s.conditions.some((c) => c.type === 'Drained' && c.status === 'True');
const nodeStatus = (s: MaintenanceStatus, node: string) => s.nodeStatuses.find((n) => n.nodeRef.name === node);
const targets = (s: MaintenanceStatus, node: string) => (nodeStatus(s, node)?.drainTargets ?? []).map(entryString);
const UNSCHEDULABLE_TOLERATION = { key: 'node.kubernetes.io/unschedulable', operator: 'Exists', effect: 'NoSchedule' };

/**
 * A one-replica Deployment pinned to `node` whose pods tolerate the cordon: the scheduler binds each
 * replacement straight back. Pinned and tolerating, it would be daemon-like (NM-6.6 c) and kept; the
 * label opts it out, so it is the Default pod that keeps coming back these tests are about.
 */
const stickyDeployment = (f: MaintenanceFixture, name: string, node: string, priority: number) =>
  f.pod(name, node, priority, { [POD_TYPE_LABEL]: 'Default' }, { tolerations: [UNSCHEDULABLE_TOLERATION] });

/** Audit helpers over one snapshot of the log. */
function auditOf(f: MaintenanceFixture, audit: AuditEvent[]) {
  const at = (pred: (e: AuditEvent) => boolean) => audit.findIndex(pred);
  return {
    evicted: (p: string) => at((e) => e.objectRef?.subresource === 'eviction' && e.responseStatus?.code === 201 && e.objectRef.namespace === f.ns && podOf(e) === p),
    deleted: (p: string) => at((e) => e.objectRef?.resource === 'pods' && !e.objectRef.subresource && e.verb === 'delete' && e.objectRef.namespace === f.ns && podOf(e) === p && /kwok/.test(e.userAgent ?? '')),
  };
}

describe('fast-forward and late pods (E3)', () => {
  const f = new MaintenanceFixture('it-nm-e3');
  beforeAll(() => f.setup(2), 60_000);
  afterAll(() => f.teardown(), 60_000);

  test('NM-3.4 a new maintenance with a lower plan is fast-forwarded on the shared node (Event, message) and starts at its own first entry on its own node; NM-3.3 T(one) does not shrink; NM-3.2 s2 waits while p2 is on one; NM-2.8 a late pod bound to one is evicted promptly', async () => {
    const [one, four] = f.nodes as [string, string];
    const b = `${f.group}-b`;
    const c = `${f.group}-c`;
    await f.pod('p1', one, 4000);
    await f.pod('p2', one, 8000);
    await f.pod('p3', one, 12000);
    await f.pod('s1', four, 1500);
    await f.pod('s2', four, 3000);
    await f.waitApps(['p1', 'p2', 'p3', 's1', 's2']);
    await f.blockingPdb('p2');

    // Given: b covers one, p1 is gone and p2 is held by its PDB, so T(one) = [D≤10000].
    const hb = await f.create(b, { nodeSelector: selectNodes(one), stage: 'Drain', drainPlan: [D(10000), D(15000)] });
    await f.statusWhen(hb, 'b: p2 refused on one', (s) => nodeStatus(s, one)?.podsBlocked === 1);
    // Its Deployment's replacement stays Pending (pinned to the cordoned node): gone means off the node.
    await waitFor('p1 gone from one', async () => !(await f.pods()).some((p) => appOf(p.metadata?.name) === 'p1' && p.spec?.nodeName === one));
    expect(targets(await f.statusWhen(hb, 'b status', () => true), one)).toEqual(['Default ≤ 10000']);

    // When c (a lower plan) is created over one and four.
    const hc = await f.create(c, { nodeSelector: selectNodes(one, four), stage: 'Drain', drainPlan: [D(2000), D(15000)] });
    await waitFor('s1 evicted', async () => (await f.evictions()).some((e) => podOf(e) === 's1'));
    const sc = await f.statusWhen(hc, 'c: one fast-forwarded, four finished at D≤2000', (s) => targets(s, four).join() === 'Default ≤ 2000' && nodeStatus(s, four)?.podsPendingEvictionRequest === 1 && !!nodeStatus(s, one));
    expect(targets(sc, one)).toEqual(['Default ≤ 10000']); // T(one) stays
    expect(nodeStatus(sc, one)!.drainMessage.split('\n')[0]).toBe(`Draining (fast-forwarded by older ${b})`);
    expect(sc.drainStatus.reachedDrainTargets.map(entryString)).toEqual(['Default ≤ 2000']);
    const ff = await waitFor('FastForwarded on c', async () => {
      const ev = await f.c.core.listNamespacedEvent({ namespace: 'default', fieldSelector: `involvedObject.name=${c},reason=FastForwarded` });
      return ev.items[0];
    });
    expect(ff.type).toBe('Warning');
    expect(ff.message).toBe(`node ${one}: drain targets [Default ≤ 10000] set by older ${b} are kept; this plan starts at Default ≤ 2000`);

    // A late pod x (1000, Deployment-owned, tolerating the cordon) is bound to one during the drain: evicted promptly.
    await stickyDeployment(f, 'x', one, 1000);
    const created = (await f.c.apps.readNamespacedDeployment({ name: 'x', namespace: f.ns })).metadata!.creationTimestamp!;
    const xEvicted = await waitFor('x evicted', async () => (await f.evictions()).find((e) => podOf(e) === 'x'), { timeoutMs: 30_000 });
    // "Promptly" is 5 s (spec); measured from the Deployment's creation, so the ReplicaSet, the
    // scheduler and kwok starting the pod are inside it too.
    const xDelay = new Date(xEvicted.requestReceivedTimestamp).getTime() - new Date(created).getTime();
    expect(xDelay).toBeLessThan(6_000);

    // s2 is not evicted while p2 is on one (hold it).
    await new Promise((r) => setTimeout(r, 15_000));
    expect((await f.evictions()).map(podOf).filter((p) => p !== 'x').sort()).toEqual(['p1', 's1']);
    expect(targets(await f.statusWhen(hc, 'c status', () => true), one)).toEqual(['Default ≤ 10000']);

    // When the PDB is relaxed: p2 leaves, both advance; p3 and s2 go, after p2's deletion.
    await f.c.policy.deleteNamespacedPodDisruptionBudget({ name: 'p2', namespace: f.ns });
    for (const h of [hb, hc]) await f.statusWhen(h, 'Drained', drained, 150_000);
    const a = auditOf(f, await f.audit());
    expect(a.deleted('p2')).toBeGreaterThan(-1);
    for (const p of ['p3', 's2']) expect([p, a.evicted(p)]).toEqual([p, expect.any(Number)]);
    expect(a.evicted('p3')).toBeGreaterThan(a.deleted('p2'));
    expect(a.evicted('s2')).toBeGreaterThan(a.deleted('p2'));
    expect(a.evicted('s2')).toBeGreaterThan(a.evicted('s1'));
    expect((await f.evictions()).map(podOf).filter((p) => p !== 'x').sort()).toEqual(['p1', 'p2', 'p3', 's1', 's2']);
    for (const h of [hb, hc]) await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await Promise.all([hb.result(), hc.result()]);
    for (const n of [one, four]) expect((await f.c.core.readNode({ name: n })).spec?.unschedulable).toBeFalsy();
  }, 300_000);
});

describe('pods that appear on a covered node (NM-2.8)', () => {
  const f = new MaintenanceFixture('it-nm-back');
  beforeAll(() => f.setup(1), 60_000);
  afterAll(() => f.teardown(), 60_000);

  test('NM-2.8 a new pod that matches T(N) is evicted, one that does not is left; a controller whose pods keep coming back is evicted at most 3 times with backoff, then named "returns after eviction: tolerates node.kubernetes.io/unschedulable" and does not block Drained', async () => {
    const [n] = f.nodes as [string];
    const m = `${f.group}-m`;
    await f.pod('db', n, 100);
    await f.waitApps(['db']);
    await f.blockingPdb('db'); // keeps T(n) at [D≤1000] while the late pods arrive
    const h = await f.create(m, { nodeSelector: selectNodes(n), stage: 'Drain', drainPlan: [D(1000)] });
    await f.statusWhen(h, 'db refused', (s) => nodeStatus(s, n)?.podsBlocked === 1);
    expect(targets(await f.statusWhen(h, 'status', () => true), n)).toEqual(['Default ≤ 1000']);

    // sticky (0) matches T(n); later (5000) does not yet.
    await stickyDeployment(f, 'sticky', n, 0);
    await stickyDeployment(f, 'later', n, 5000);
    const left = await f.statusWhen(h, 'sticky named in the node\'s message', (s) => (nodeStatus(s, n)?.drainMessage ?? '').includes('returns after eviction: tolerates node.kubernetes.io/unschedulable'), 120_000);
    const sticky = (await f.evictions()).filter((e) => podOf(e) === 'sticky');
    expect(sticky).toHaveLength(3);
    expect(new Set(sticky.map((e) => e.objectRef!.name)).size).toBe(3); // three different pods, each once
    const t = sticky.map((e) => new Date(e.requestReceivedTimestamp).getTime());
    expect(t[1]! - t[0]!).toBeGreaterThanOrEqual(1_500); // backoff: 2 s, then 4 s
    expect(t[2]! - t[1]!).toBeGreaterThanOrEqual(3_500);
    expect(nodeStatus(left, n)!.drainMessage).toContain('sticky-');
    expect((await f.evictions()).map(podOf)).not.toContain('later'); // not targeted at D≤1000

    // Relaxed: db goes, the plan walks on; later is targeted now and capped the same way; sticky's
    // pod stays on the node and does not block Drained.
    await f.c.policy.deleteNamespacedPodDisruptionBudget({ name: 'db', namespace: f.ns });
    const done = await f.statusWhen(h, 'Drained', drained, 150_000);
    const ev = (await f.evictions()).map(podOf);
    expect(ev.filter((p) => p === 'db')).toHaveLength(1);
    expect(ev.filter((p) => p === 'sticky')).toHaveLength(3);
    expect(ev.filter((p) => p === 'later').length).toBeLessThanOrEqual(3);
    const onNode = (await f.pods()).filter((p) => p.spec?.nodeName === n && !p.metadata?.deletionTimestamp).map((p) => appOf(p.metadata?.name));
    expect(onNode).toContain('sticky');
    expect(nodeStatus(done, n)!.drainMessage.split('\n')[0]).toBe('Drained');
    // NM-2.8: still named in N's message after Drained, until Complete.
    expect(nodeStatus(done, n)!.drainMessage).toMatch(/sticky-.*returns after eviction: tolerates node.kubernetes.io\/unschedulable/);
    await h.executeUpdate(setStageUpdate, { args: [{ stage: 'Complete' }] });
    await h.result();
    expect((await f.evictions()).map(podOf).filter((p) => p === 'sticky')).toHaveLength(3); // left until Complete
  }, 300_000);
});
