// #27.3 a rolling maintenance in its object's status, from MaintenanceStatus fixtures through the
// bridge's pure decision (desiredMaintenance): status.rollout and the per-node phase fields mirrored
// and bounded as the CRD holds them, and the Events of their transitions (RolloutStopped, NodeFailed,
// NodeDone, CannotFinish), each once: not again on a resync of the same status.
import { DEFAULT_DRAIN_PLAN } from '../../api/drain-plan.js';
import { NodeMaintenanceStatus } from '../../api/node-maintenance.js';
import { desiredMaintenance, type MaintenanceWorkflowView } from '../../starter/bridge/maintenance/desired.js';
import type { NodeMaintenanceObject } from '../../starter/bridge/maintenance/objects.js';
import { ROLLOUT_BOUNDS } from '../../starter/bridge/maintenance/rollout-status.js';
import type { Condition, MaintenanceNodeStatus, MaintenanceStatus, RolloutStatus } from '../../workflows/maintenance/types.js';

const t0 = new Date('2026-01-01T00:00:00Z');
const t1 = new Date('2026-01-01T00:05:00Z');
const WF = 'nm/roll/uid-1';
const counts = { podsPendingEvictionRequest: 0, activeEvictionRequests: 0, podsBlocked: 0, podsKept: 0 };

const obj = (status?: NodeMaintenanceObject['status']): NodeMaintenanceObject => ({
  apiVersion: 'slipway.dev/v1alpha1',
  kind: 'NodeMaintenance',
  metadata: { name: 'roll', uid: 'uid-1', generation: 1 },
  spec: { nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'Exists' }] }] }, stage: 'Drain', rollout: { maxUnavailable: 2, completion: { reboot: true } } },
  ...(status && { status }),
});
const node = (name: string, over: Partial<MaintenanceNodeStatus> = {}): MaintenanceNodeStatus => ({ nodeRef: { name }, drainTargets: [], drainMessage: '', limitedBy: [], ...counts, ...over });
const rollout = (over: Partial<RolloutStatus> = {}): RolloutStatus => ({ phase: 'Running', maxUnavailable: 2, partitions: ['eu-1a', 'eu-1b'], partition: 'eu-1a', waiting: 2, inProgress: 1, done: 0, failed: 0, ...over });
const READY: Condition = { type: 'Ready', status: 'True', reason: 'Active', message: 'rolling' };
const state = (nodes: MaintenanceNodeStatus[], over: Partial<MaintenanceStatus> = {}): MaintenanceStatus => ({
  stage: 'Drain',
  stageStatuses: [{ name: 'Idle', startTimestamp: '2026-01-01T00:00:00Z' }, { name: 'Drain', startTimestamp: '2026-01-01T00:00:01Z' }],
  drainPlan: [...DEFAULT_DRAIN_PLAN],
  planIndex: 0,
  selectedNodes: nodes.length,
  nodeStatuses: nodes,
  nodeStatusesOmitted: 0,
  drainStatus: { reachedDrainTargets: [], drainMessage: '', ...counts },
  rollout: rollout(),
  conditions: [READY],
  message: 'Drain: rolling',
  observedGeneration: 1,
  completed: false,
  ...over,
});
const wf = (s: MaintenanceStatus): MaintenanceWorkflowView => ({ workflowId: WF, runId: 'run-1', generation: 1, state: s });

/** Each step's status is written (the next step's stored status), as the reconciler does; the Events of each step. */
function run(...steps: MaintenanceStatus[]): { status: NodeMaintenanceObject['status']; events: string[][] } {
  let stored: NodeMaintenanceObject['status'];
  const events: string[][] = [];
  steps.forEach((s, i) => {
    const d = desiredMaintenance({ obj: obj(stored), workflow: wf(s), now: i ? t1 : t0 });
    if (d.status) stored = d.status.next;
    events.push(d.events.filter((e) => e.reason !== 'StageStarted').map((e) => `${e.type} ${e.reason}: ${e.message} [${e.dedup}]`));
  });
  return { status: stored, events };
}

describe('#27.3 status.rollout and the per-node rollout fields are mirrored', () => {
  test('status.rollout and each node\'s phase, waitingFor, phaseTimes, bootID and message', () => {
    const n1 = node('n1', { phase: 'AwaitingWork', phaseTimes: [{ phase: 'Waiting', time: 'a' }, { phase: 'Cordoned', time: 'b' }, { phase: 'Draining', time: 'c' }, { phase: 'AwaitingWork', time: 'd' }], bootID: 'boot-1' });
    const n2 = node('n2', { phase: 'Waiting', waitingFor: 'maxUnavailable', phaseTimes: [{ phase: 'Waiting', time: 'a' }] });
    const { status } = run(state([n1, n2]));
    expect(status!.rollout).toEqual(rollout());
    expect(status!.nodeStatuses).toEqual([n1, n2]);
    expect(NodeMaintenanceStatus.safeParse(status).success).toBe(true);
  });

  test('bounded as the CRD holds them: the newest 8 phase times, 1000 partitions, one-line waitingFor and rollout message, text clipped', () => {
    const times = Array.from({ length: 12 }, (_, i) => ({ phase: i % 2 ? ('Draining' as const) : ('Cordoned' as const), time: `t${i}` }));
    const n1 = node('n1', { phase: 'Failed', phaseTimes: times, waitingFor: 'x\ny', message: 'm'.repeat(5000) });
    const r = rollout({ partitions: Array.from({ length: 1200 }, (_, i) => `z${i}`), message: 'waiting for n1\n* detail' });
    const { status } = run(state([n1], { rollout: r }));
    const out = status!.nodeStatuses![0]!;
    expect(out.phaseTimes!.map((t) => t.time)).toEqual(['t4', 't5', 't6', 't7', 't8', 't9', 't10', 't11']);
    expect(out.waitingFor).toBe('x');
    expect(out.message!.length).toBe(ROLLOUT_BOUNDS.text);
    expect(status!.rollout!.partitions).toHaveLength(1000);
    expect(status!.rollout!.message).toBe('waiting for n1');
    expect(NodeMaintenanceStatus.safeParse(status).success).toBe(true);
  });

  test('a maintenance without a rollout gets no rollout fields (its nodes are passed as they are)', () => {
    const n1 = node('n1', { drainMessage: 'drained' });
    const { status } = run(state([n1], { rollout: undefined }));
    expect(status).not.toHaveProperty('rollout');
    expect(status!.nodeStatuses).toEqual([n1]);
    expect(Object.keys(status!.nodeStatuses![0]!).sort()).toEqual(Object.keys(n1).sort());
  });
});

describe('#27.3 Events of a rollout, each once', () => {
  test('NodeDone (Normal) per node entering Done; NodeFailed (Warning) per node entering Failed, with its message; none again on resync', () => {
    const a = state([node('n1', { phase: 'AwaitingWork' }), node('n2', { phase: 'Draining' })]);
    const b = state([node('n1', { phase: 'Done' }), node('n2', { phase: 'Failed', message: 'nodeTimeout 1h passed while AwaitingWork\nmore' })]);
    const c = state([node('n1', { phase: 'Done' }), node('n2', { phase: 'Failed', message: 'nodeTimeout 1h passed while AwaitingWork\nmore' })], { message: 'Drain: still rolling' });
    expect(run(a, b, b, c).events).toEqual([
      [],
      [
        `Normal NodeDone: node n1 done: its work is complete and verified; released [${WF}/NodeDone/n1]`,
        `Warning NodeFailed: node n2 failed: nodeTimeout 1h passed while AwaitingWork [${WF}/NodeFailed/n2]`,
      ],
      [],
      [],
    ]);
  });

  test('a node already Done when the bridge first sees the workflow gets its Event once (dedup key per node)', () => {
    expect(run(state([node('n1', { phase: 'Done' })])).events).toEqual([[`Normal NodeDone: node n1 done: its work is complete and verified; released [${WF}/NodeDone/n1]`]]);
  });

  test('RolloutStopped (Warning) when the condition turns True, with its message; not while it stays True', () => {
    const stopped: Condition = { type: 'RolloutStopped', status: 'True', reason: 'MaxFailures', message: '2 nodes failed, maxFailures is 1: no new node is taken' };
    const running = state([node('n1', { phase: 'Failed' })], { conditions: [READY, { ...stopped, status: 'False', reason: 'Running', message: '' }] });
    const halted = state([node('n1', { phase: 'Failed' })], { conditions: [READY, stopped], rollout: rollout({ phase: 'Stopped' }) });
    const { events, status } = run(running, halted, halted);
    expect(events.map((e) => e.filter((x) => x.includes('RolloutStopped')))).toEqual([[], [`Warning RolloutStopped: ${stopped.message} [${WF}/RolloutStopped/2026-01-01T00:05:00Z]`], []]);
    expect(status!.rollout!.phase).toBe('Stopped');
  });

  test('CannotFinish (Warning) once when the condition turns True', () => {
    const cannot: Condition = { type: 'CannotFinish', status: 'True', reason: 'BudgetTooSmall', message: '3 nodes selected; NodeDisruptionBudget x allows 1 at a time: this maintenance can finish only with spec.rollout' };
    const s = state([node('n1'), node('n2'), node('n3')], { rollout: undefined, conditions: [READY, cannot] });
    expect(run(s, s).events).toEqual([[`Warning CannotFinish: ${cannot.message} [${WF}/CannotFinish/2026-01-01T00:00:00Z]`], []]);
  });
});
