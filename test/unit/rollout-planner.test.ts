// The rollout's pure planner (workflows/maintenance/rollout/): which node starts next (plan.ts), the
// order (order.ts) and each phase's handler (phases.ts). Named after docs/rolling-maintenance.md.
import type { RolloutNodePhase } from '../../api/rollout.js';
import { partitionOrder, rolloutOrder } from '../../workflows/maintenance/rollout/order.js';
import { nextToStart, type PlannerNode } from '../../workflows/maintenance/rollout/plan.js';
import { nextStep, PHASE_HANDLERS, type NodeView } from '../../workflows/maintenance/rollout/phases.js';
import type { RolloutNode } from '../../workflows/maintenance/rollout/record.js';
import { NO_COUNTS, type NodeReport } from '../../workflows/maintenance/types.js';

const n = (name: string, partition = '', phase: RolloutNodePhase = 'Waiting', held?: boolean): PlannerNode => ({ name, partition, phase, ...(held ? { held } : {}) });
const plan = (nodes: PlannerNode[], more: { maxUnavailable?: number | string; maxFailures?: number; paused?: boolean } = {}) =>
  nextToStart({ nodes, maxUnavailable: more.maxUnavailable ?? 1, maxFailures: more.maxFailures ?? 0, paused: more.paused ?? false });

describe('RM-1.2 RM-1.3 partition order', () => {
  test('RM-1.2 partitions sorted, nodes without the label last; within a partition by node name', () => {
    expect(partitionOrder(['zone-b', '', 'zone-a', 'zone-b'])).toEqual(['zone-a', 'zone-b', '']);
    expect(rolloutOrder([n('c', 'zone-b'), n('a', ''), n('b', 'zone-a'), n('a2', 'zone-b'), n('d', 'zone-a')])).toEqual(['b', 'd', 'a2', 'c', 'a']);
  });
  test('RM-1.3 a later partition starts only once every node of the earlier ones is Done or Failed', () => {
    const nodes = [n('a1', 'a', 'Done'), n('a2', 'a', 'AwaitingWork', true), n('b1', 'b'), n('b2', 'b')];
    const r = plan(nodes, { maxUnavailable: 3, maxFailures: 1 });
    expect(r.start).toEqual([]);
    expect(r.partition).toBe('a');
    expect(r.waitingFor).toEqual({ b1: 'partition a', b2: 'partition a' });
    const next = plan([n('a1', 'a', 'Done'), n('a2', 'a', 'Failed'), n('b1', 'b'), n('b2', 'b'), n('x', '')], { maxUnavailable: 3, maxFailures: 1 });
    expect(next.start).toEqual(['b1', 'b2']);
    expect(next.partition).toBe('b');
    expect(next.waitingFor).toEqual({ x: 'partition b' });
    expect(next.partitions).toEqual(['a', 'b', '']);
  });
});

describe('RM-1.4 maxUnavailable', () => {
  test('RM-1.4 a count: no more than that many in progress; Waiting nodes say so', () => {
    const r = plan([n('a'), n('b'), n('c'), n('d')], { maxUnavailable: 2 });
    expect(r.start).toEqual(['a', 'b']);
    expect(r.waitingFor).toEqual({ c: 'maxUnavailable (2 of 2 in progress)', d: 'maxUnavailable (2 of 2 in progress)' });
    // In progress (held while it waits for a budget slot, Cordoned … Verifying) takes a place; Done and Failed do not.
    expect(plan([n('a', '', 'Verifying', false), n('b', '', 'Waiting', true), n('c'), n('d')], { maxUnavailable: 3 }).start).toEqual(['c']);
    expect(plan([n('a', '', 'Done'), n('b', '', 'Failed'), n('c'), n('d')], { maxUnavailable: 2, maxFailures: 1 }).start).toEqual(['c', 'd']);
  });
  test('RM-1.4 a percentage of the selected nodes, rounded down, at least 1', () => {
    const ten = Array.from({ length: 10 }, (_, i) => n(`n${i}`));
    expect(plan(ten, { maxUnavailable: '25%' }).start).toEqual(['n0', 'n1']);
    expect(plan(ten, { maxUnavailable: '25%' }).limit).toBe(2);
    expect(plan(ten.slice(0, 3), { maxUnavailable: '25%' }).start).toEqual(['n0']);
  });
  test('RM-1.5 a node held elsewhere too is counted once', () => {
    // The same node reported twice (e.g. by the rollout and as claimed by a cycle) is one node in progress.
    const r = plan([n('a', '', 'Draining', true), n('a', '', 'Draining', true), n('b'), n('c')], { maxUnavailable: 2 });
    expect(r.start).toEqual(['b']);
    expect(r.inProgress).toBe(2);
  });
});

describe('RM-1.5 a Waiting node held elsewhere', () => {
  const held = (name: string, elsewhere: string, partition = ''): PlannerNode => ({ ...n(name, partition), elsewhere });
  test('RM-1.5 a Waiting node held elsewhere is waited for, named in waitingFor, and counted once against maxUnavailable', () => {
    const r = plan([held('a', 'NodeMaintenance other'), held('b', 'CycleNodeRequest default/cyc'), n('c'), n('d')], { maxUnavailable: 3 });
    expect(r.start).toEqual(['c']);
    expect(r.waitingFor).toEqual({ a: 'held by NodeMaintenance other', b: 'held by CycleNodeRequest default/cyc', d: 'maxUnavailable (3 of 3 in progress, 2 held elsewhere)' });
    expect(r.inProgress).toBe(3);
    // Started by us while another holds it too: one node in progress, not two.
    const both = plan([{ ...n('a', '', 'Draining', true), elsewhere: 'NodeMaintenance other' }, n('b'), n('c')], { maxUnavailable: 2 });
    expect(both.start).toEqual(['b']);
    // Held elsewhere in a later partition: unavailable all the same.
    expect(plan([n('a1', 'a'), n('a2', 'a'), held('b1', 'NodeMaintenance other', 'b')], { maxUnavailable: 2 }).start).toEqual(['a1']);
  });
});

describe('RM-4.4 RM-5.1 stop and pause', () => {
  test('RM-4.4 Failed nodes past maxFailures stop the rollout: no new node, the reason names them', () => {
    const r = plan([n('a', '', 'Failed'), n('b'), n('c')], { maxUnavailable: 2, maxFailures: 0 });
    expect(r.start).toEqual([]);
    expect(r.stop).toBe('1 node failed (maxFailures 0): a');
    expect(r.waitingFor).toEqual({ b: 'rollout stopped', c: 'rollout stopped' });
    expect(plan([n('a', '', 'Failed'), n('b')], { maxFailures: 1 }).start).toEqual(['b']);
  });
  test('RM-5.1 a paused rollout starts nothing; in-progress nodes are left as they are', () => {
    const r = plan([n('a', '', 'Draining', true), n('b'), n('c')], { maxUnavailable: 3, paused: true });
    expect(r.start).toEqual([]);
    expect(r.waitingFor).toEqual({ b: 'paused', c: 'paused' });
    expect(r.inProgress).toBe(1);
  });
});

describe('RM-2.1 per-node phase handlers', () => {
  const report = (r: Partial<NodeReport> = {}): NodeReport => ({ node: 'x', seq: 1, lanes: [], finished: false, drained: false, gone: false, released: false, counts: NO_COUNTS, coveredBy: ['m'], limitedBy: [], blockers: '', ...r });
  const rec = (phase: RolloutNodePhase, r: Partial<RolloutNode> = {}): RolloutNode => ({ phase, partition: '', times: phase === 'Waiting' ? [] : [{ phase: 'Cordoned', time: '2026-01-01T00:00:00Z' }], held: true, index: 0, ...r });
  const view = (v: Partial<NodeView> & { rec: RolloutNode }): NodeView => ({ planLength: 2, released: false, checking: false, nowMs: Date.parse('2026-01-01T00:01:00Z'), ...v });
  test('RM-2.1 one handler per phase', () => {
    expect(Object.keys(PHASE_HANDLERS)).toEqual(['Waiting', 'Cordoned', 'Draining', 'AwaitingWork', 'Verifying', 'Done', 'Failed']);
  });
  test('RM-1.6 Waiting: started and refused by a budget stays Waiting; granted, it is Cordoned', () => {
    expect(nextStep(view({ rec: rec('Waiting'), report: report({ budgetWait: 'waiting for NodeDisruptionBudget b: 1 of 1 nodes disrupted' }) }))).toBeUndefined();
    expect(nextStep(view({ rec: rec('Waiting', { held: false }) }))).toBeUndefined();
    expect(nextStep(view({ rec: rec('Waiting'), report: report() }))).toEqual({ to: 'Cordoned' });
    expect(nextStep(view({ rec: rec('Waiting'), report: report({ claimedBy: 'ns/cnr' }) }))).toBeUndefined(); // RM-1.5: waited for
  });
  test('RM-2.1 Draining → AwaitingWork only drained at the end of its own plan position, with its bootID recorded first', () => {
    expect(nextStep(view({ rec: rec('Cordoned'), report: report({ lanes: [{ podType: 'Default', podPriority: 1 }] }) }))).toEqual({ to: 'Draining' });
    expect(nextStep(view({ rec: rec('Draining', { index: 1 }), report: report({ drained: true }) }))).toBeUndefined();
    expect(nextStep(view({ rec: rec('Draining', { index: 2 }), report: report({ drained: true }) }))).toEqual({ to: 'AwaitingWork', effect: 'recordBoot' });
  });
  test('RM-3.6 AwaitingWork: work done releases it (Verifying); Verifying checks once the release is acknowledged', () => {
    expect(nextStep(view({ rec: rec('AwaitingWork') }))).toBeUndefined();
    expect(nextStep(view({ rec: rec('AwaitingWork', { workDone: 'reboot' }) }))).toEqual({ to: 'Verifying', effect: 'release', message: 'work done (reboot)' });
    expect(nextStep(view({ rec: rec('Verifying') }))).toBeUndefined();
    expect(nextStep(view({ rec: rec('Verifying'), released: true }))).toEqual({ effect: 'verify' });
    expect(nextStep(view({ rec: rec('Verifying'), released: true, checking: true }))).toBeUndefined();
  });
  test('RM-4.1 RM-4.3 RM-2.4 nodeTimeout from the cordon, a failed drain, a deleted node', () => {
    const late = { timeoutMs: 60_000, timeout: '1m' };
    expect(nextStep(view({ rec: rec('AwaitingWork'), ...late }))).toEqual({ to: 'Failed', message: 'no completion within 1m' });
    expect(nextStep(view({ rec: rec('AwaitingWork'), timeoutMs: 61_000, timeout: '61s' }))).toBeUndefined();
    expect(nextStep(view({ rec: rec('Draining'), report: report({ drainFailed: 'pod app/db: eviction refused' }) }))).toEqual({ to: 'Failed', message: 'drain failed: pod app/db: eviction refused' });
    expect(nextStep(view({ rec: rec('Draining'), report: report({ gone: true }) }))).toEqual({ to: 'Done', message: 'node deleted' });
  });
});
