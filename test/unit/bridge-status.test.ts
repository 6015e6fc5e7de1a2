// The bridge's pure mapping from a cycle workflow's state to CycleNodeRequest / CycleNodeStatus
// status: conditions and their transition times, change detection, closed workflows, invalid specs,
// what blocks a drain (node entries, Ready, DrainBlocked Events), a failing workflow task, and when
// CycleNodeStatus objects may be created.
import { CycleNodeRequestSpec, type CycleNodeRequestStatus } from '../../api/cycle-node-request.js';
import type { CycleStatus, CycleNodeStatus } from '../../workflows/cycle/types.js';
import { drainMessage, emptyStatus, type DrainStatus } from '../../workflows/drain/status.js';
import { canonical } from '../../api/canonical.js';
import { closedGeneration, invalidSpecMessage, mergePatchOf, setCondition, statusChanged } from '../../starter/bridge/workflow-status.js';
import { closedNodes, closedState, invalidSpecStatus, isCycleStatus, mayCreateNodeStatuses, nodeStatus, phaseEvent, readyMessage, requestStatus, stateFromStatus, statusEvents } from '../../starter/bridge/cycle/status.js';
import { drainBlockers } from '../../shared/drain-blockers.js';
import type { TaskFailure } from '../../starter/bridge/task-failure.js';

const t0 = new Date('2026-01-01T10:00:00.123Z');
const t1 = new Date('2026-01-01T10:05:00Z');
const t2 = new Date('2026-01-01T10:09:00Z');
const wf = { workflowId: 'cnr/ns/req/uid-1', runId: 'run-1' };

const state = (phase: CycleStatus['phase'], extra: Partial<CycleStatus> = {}): CycleStatus => ({
  phase,
  message: `${phase} message`,
  nodes: [
    { nodeName: 'n1', phase: 'DrainingPods', providerID: 'kwok://n1', nodeGroup: 'g', startedAt: '2026-01-01T10:01:00Z', timeoutAt: '2026-01-01T13:01:00Z', evicted: 3, drainMessage: 'Drain not completed yet' },
    { nodeName: 'n2', phase: 'Pending' },
  ],
  nodesCycled: 0,
  nodesTotal: 2,
  startedAt: '2026-01-01T10:00:00Z',
  ...extra,
});

const cond = (s: CycleNodeRequestStatus, type: string) => s.conditions!.find((c) => c.type === type)!;

describe('requestStatus', () => {
  test('maps phase, message, nodes, counts, times, workflow and generation', () => {
    const s = requestStatus({ prev: undefined, workflow: wf, state: state('ScalingUp'), observedGeneration: 3, now: t0 });
    expect(s).toEqual({
      phase: 'ScalingUp',
      message: 'ScalingUp message',
      nodes: [
        { name: 'n1', providerID: 'kwok://n1', nodeGroup: 'g', phase: 'DrainingPods', message: 'Drain not completed yet' },
        { name: 'n2', phase: 'Pending' },
      ],
      nodesByPhase: { Pending: 1, WaitingPods: 0, RemovingLabelsFromPods: 0, DrainingPods: 1, DeletingNode: 0, TerminatingNode: 0, Successful: 0, Failed: 0 },
      nodesNotListed: 0,
      nodesCycled: 0,
      nodesTotal: 2,
      startedAt: '2026-01-01T10:00:00Z',
      workflowId: wf.workflowId,
      runId: 'run-1',
      observedGeneration: 3,
      conditions: [
        { type: 'Ready', status: 'Unknown', reason: 'ScalingUp', message: 'ScalingUp message\n* Node n1: Drain not completed yet', lastTransitionTime: '2026-01-01T10:00:00Z', observedGeneration: 3 },
        { type: 'Progressing', status: 'True', reason: 'ScalingUp', message: '0/2 nodes cycled', lastTransitionTime: '2026-01-01T10:00:00Z', observedGeneration: 3 },
      ],
    });
  });

  test('Ready is True when Successful, False when Failed; Progressing False on both', () => {
    const ok = requestStatus({ prev: undefined, workflow: wf, state: state('Successful'), observedGeneration: 1, now: t0 });
    expect([cond(ok, 'Ready').status, cond(ok, 'Progressing').status]).toEqual(['True', 'False']);
    const bad = requestStatus({ prev: undefined, workflow: wf, state: state('Failed'), observedGeneration: 1, now: t0 });
    expect([cond(bad, 'Ready').status, cond(bad, 'Ready').reason, cond(bad, 'Progressing').status]).toEqual(['False', 'Failed', 'False']);
    const healing = requestStatus({ prev: undefined, workflow: wf, state: state('Healing'), observedGeneration: 1, now: t0 });
    expect([cond(healing, 'Ready').status, cond(healing, 'Progressing').status]).toEqual(['Unknown', 'True']);
  });

  test('lastTransitionTime is kept while a condition status stays, and moves when it changes', () => {
    const a = requestStatus({ prev: undefined, workflow: wf, state: state('ScalingUp'), observedGeneration: 1, now: t0 });
    const b = requestStatus({ prev: a, workflow: wf, state: state('CordoningNode'), observedGeneration: 1, now: t1 });
    // Unknown → Unknown and True → True: reason and message change, the time does not.
    expect(cond(b, 'Ready')).toMatchObject({ reason: 'CordoningNode', lastTransitionTime: '2026-01-01T10:00:00Z' });
    expect(cond(b, 'Progressing').lastTransitionTime).toBe('2026-01-01T10:00:00Z');
    const c = requestStatus({ prev: b, workflow: wf, state: state('Successful', { nodesCycled: 2 }), observedGeneration: 1, now: t2 });
    expect(cond(c, 'Ready')).toMatchObject({ status: 'True', lastTransitionTime: '2026-01-01T10:09:00Z' });
    expect(cond(c, 'Progressing')).toMatchObject({ status: 'False', message: '2/2 nodes cycled', lastTransitionTime: '2026-01-01T10:09:00Z' });
  });

  test('the same state at a later time is no change (nothing to write)', () => {
    const a = requestStatus({ prev: undefined, workflow: wf, state: state('ScalingUp'), observedGeneration: 1, now: t0 });
    const again = requestStatus({ prev: a, workflow: wf, state: state('ScalingUp'), observedGeneration: 1, now: t2 });
    expect(statusChanged(a, again)).toBe(false);
    const moved = requestStatus({ prev: a, workflow: wf, state: state('ScalingUp', { message: 'other' }), observedGeneration: 1, now: t2 });
    expect(statusChanged(a, moved)).toBe(true);
  });

  test('without a state yet: Pending at first, else the previous status of the same workflow is kept', () => {
    const first = requestStatus({ prev: undefined, workflow: wf, state: undefined, observedGeneration: 2, now: t0 });
    expect(first).toMatchObject({ phase: 'Pending', message: `workflow ${wf.workflowId} started`, workflowId: wf.workflowId, runId: 'run-1', observedGeneration: 2 });
    const running = requestStatus({ prev: first, workflow: wf, state: state('ScalingUp'), observedGeneration: 2, now: t1 });
    // After a bridge restart (no query answer yet) the status does not go back to Pending.
    const restarted = requestStatus({ prev: running, workflow: { workflowId: wf.workflowId }, state: undefined, observedGeneration: 2, now: t2 });
    expect(statusChanged(running, restarted)).toBe(false);
  });

  test("an invalid spec's status (another workflow or none) is not carried over into the workflow's", () => {
    const invalid = invalidSpecStatus(undefined, 'invalid spec: x', 1, t0);
    const s = requestStatus({ prev: invalid, workflow: wf, state: undefined, observedGeneration: 2, now: t1 });
    expect(s.phase).toBe('Pending');
    expect(s.message).toBe(`workflow ${wf.workflowId} started`);
    expect(cond(s, 'Ready')).toMatchObject({ status: 'Unknown', reason: 'Pending', lastTransitionTime: '2026-01-01T10:05:00Z' });
  });
});

describe('setCondition', () => {
  test('adds, replaces in place, and keeps other conditions', () => {
    const a = setCondition([{ type: 'Other', status: 'True', reason: 'X', message: '', lastTransitionTime: 'old' }], { type: 'Ready', status: 'False', reason: 'A', message: 'm' }, t0);
    expect(a.map((c) => c.type)).toEqual(['Other', 'Ready']);
    const b = setCondition(a, { type: 'Ready', status: 'False', reason: 'B', message: 'n' }, t2);
    expect(b[1]).toEqual({ type: 'Ready', status: 'False', reason: 'B', message: 'n', lastTransitionTime: '2026-01-01T10:00:00Z' });
    expect(b[0]!.lastTransitionTime).toBe('old');
  });
});

describe('closed workflows', () => {
  const last = state('CordoningNode', { nodesCycled: 1 });

  test('a completed workflow returning a CycleStatus is taken as is', () => {
    const result = state('Successful', { nodesCycled: 2, completedAt: '2026-01-01T11:00:00Z' });
    expect(closedState({ statusName: 'COMPLETED', result }, last, wf.workflowId)).toBe(result);
  });

  test('a completed workflow without a CycleStatus result is Successful with the last known nodes', () => {
    const s = closedState({ statusName: 'COMPLETED', result: 'done', closeTime: t2 }, last, wf.workflowId);
    expect(s).toMatchObject({ phase: 'Successful', nodes: last.nodes, nodesCycled: 1, completedAt: t2.toISOString() });
  });

  test.each([
    ['FAILED', 'node n1 did not drain', 'workflow failed: node n1 did not drain'],
    ['TERMINATED', 'by operator', 'workflow terminated: by operator'],
    ['CANCELLED', 'Workflow canceled', 'workflow cancelled: Workflow canceled'],
    ['TIMED_OUT', undefined, 'workflow timed out'],
  ])('%s → Failed with the failure message', (statusName, failure, message) => {
    const s = closedState({ statusName, failure, closeTime: t2 }, last, wf.workflowId);
    expect(s).toMatchObject({ phase: 'Failed', message, nodes: last.nodes, nodesTotal: 2 });
    const st = requestStatus({ prev: undefined, workflow: wf, state: s, observedGeneration: 1, now: t2 });
    expect(cond(st, 'Ready')).toMatchObject({ status: 'False', reason: 'Failed', message });
  });

  test("a failed workflow's final query answer wins over the last one seen, and gives the nodes", () => {
    const finalState = state('Healing', { nodes: [{ nodeName: 'n1', phase: 'Failed', message: 'healed' }], nodesTotal: 1 });
    const closed = { statusName: 'FAILED', failure: 'boom', finalState };
    expect(closedState(closed, last, wf.workflowId)).toMatchObject({ phase: 'Failed', message: 'workflow failed: boom', nodes: finalState.nodes, nodesTotal: 1 });
    expect(closedNodes(closed)).toBe(finalState.nodes);
    expect(closedNodes({ statusName: 'TERMINATED' })).toBeUndefined();
    const result = state('Successful');
    expect(closedNodes({ statusName: 'COMPLETED', result })).toBe(result.nodes);
  });

  test('the last state can come from the stored status (after a restart)', () => {
    const st = requestStatus({ prev: undefined, workflow: wf, state: last, observedGeneration: 1, now: t0 });
    const back = stateFromStatus(st)!;
    expect(back.nodes.map((n) => [n.nodeName, n.phase])).toEqual([
      ['n1', 'DrainingPods'],
      ['n2', 'Pending'],
    ]);
    expect(back).toMatchObject({ phase: 'CordoningNode', nodesCycled: 1, nodesTotal: 2 });
  });

  test('isCycleStatus recognises the query shape only', () => {
    expect(isCycleStatus(last)).toBe(true);
    expect(isCycleStatus({ phase: 'Nope', nodes: [], nodesCycled: 0, nodesTotal: 0 })).toBe(false);
    expect(isCycleStatus({ phase: 'Pending' })).toBe(false);
    expect(isCycleStatus(null)).toBe(false);
  });
});

describe('invalid spec', () => {
  test('lists every problem as path: message', () => {
    const r = CycleNodeRequestSpec.safeParse({
      nodeGroupName: 'g',
      selector: { matchLabels: { 'bad key!': 'x' } },
      healthChecks: [{ endpoint: 'http://x', waitPeriod: '1m', regexMatch: '([' }],
    });
    expect(r.success).toBe(false);
    const msg = invalidSpecMessage(r.error!);
    expect(msg).toBe(
      'invalid spec: spec.selector.matchLabels.bad key!: label key "bad key!" is not valid: an optional DNS subdomain prefix of at most 253 characters and "/", then a name of 1 to 63 letters, digits, "-", "_" or ".", beginning and ending with a letter or digit; ' +
        'spec.healthChecks[0].regexMatch: "([" is not a regular expression valid in both JavaScript and RE2 (no lookaround, backreferences or inline flags)',
    );
  });

  test('schema errors carry their path too', () => {
    const r = CycleNodeRequestSpec.safeParse({ selector: {}, cycleSettings: { cyclingTimeout: 'soon' } });
    const msg = invalidSpecMessage(r.error!);
    expect(msg).toContain('spec.cycleSettings.cyclingTimeout: ');
    expect(msg).toContain('spec.nodeGroupName: name at least one node group');
    expect(msg).toContain('spec.selector: selector must not be empty');
  });

  test('status: Failed, Ready=False and Progressing=False with reason InvalidSpec, stable when repeated', () => {
    const a = invalidSpecStatus(undefined, 'invalid spec: x', 4, t0);
    expect(a).toMatchObject({ phase: 'Failed', message: 'invalid spec: x', observedGeneration: 4 });
    expect(cond(a, 'Ready')).toMatchObject({ status: 'False', reason: 'InvalidSpec', message: 'invalid spec: x' });
    expect(cond(a, 'Progressing')).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
    expect(a.workflowId).toBeUndefined();
    expect(statusChanged(a, invalidSpecStatus(a, 'invalid spec: x', 4, t2))).toBe(false);
  });
});

describe('CycleNodeStatus status and patches', () => {
  test('nodeStatus maps every field the CRD has', () => {
    expect(nodeStatus(state('ScalingUp').nodes[0]!)).toEqual({
      phase: 'DrainingPods',
      providerID: 'kwok://n1',
      nodeGroup: 'g',
      startedAt: '2026-01-01T10:01:00Z',
      timeoutAt: '2026-01-01T13:01:00Z',
      evicted: 3,
      drainMessage: 'Drain not completed yet',
    });
    expect(nodeStatus({ nodeName: 'n2', phase: 'Pending' })).toEqual({ phase: 'Pending' });
    const returning = [{ pod: 'ns/sticky-4', reason: 'returns after eviction' }];
    expect(nodeStatus({ nodeName: 'n3', phase: 'Successful', message: '1 Pod left on the Node: ns/sticky-4', returning })).toEqual({ phase: 'Successful', message: '1 Pod left on the Node: ns/sticky-4', returning });
  });

  test('mergePatchOf nulls the keys that went away', () => {
    expect(mergePatchOf({ phase: 'DrainingPods', drainMessage: 'x', evicted: 1 }, { phase: 'DeletingNode', evicted: 2 })).toEqual({
      phase: 'DeletingNode',
      evicted: 2,
      drainMessage: null,
    });
    expect(mergePatchOf(undefined, { phase: 'Pending', message: undefined })).toEqual({ phase: 'Pending' });
  });

  test('canonical ignores key order and undefined', () => {
    expect(canonical({ b: 1, a: [{ y: 2, x: undefined, z: 1 }] })).toBe(canonical({ a: [{ z: 1, y: 2 }], b: 1 }));
    expect(statusChanged(undefined, {})).toBe(false);
  });
});

describe('phase events', () => {
  test('Normal Phase<Phase> on a change, Warning for Failed, none without a change', () => {
    expect(phaseEvent('Pending', 'ScalingUp', 'scaling')).toEqual({ type: 'Normal', reason: 'PhaseScalingUp', message: 'Pending → ScalingUp: scaling' });
    expect(phaseEvent('ScalingUp', 'Failed', 'boom')).toMatchObject({ type: 'Warning', reason: 'PhaseFailed' });
    expect(phaseEvent(undefined, 'Pending', '')).toMatchObject({ type: 'Normal', reason: 'PhasePending' });
    expect(phaseEvent('ScalingUp', 'ScalingUp', 'x')).toBeUndefined();
  });
});

// ---- a drain that is blocked ----------------------------------------------------------------------

const PDB =
  "cannot evict pod as it would violate the pod's disruption budget. The disruption budget web-pdb needs 2 healthy pods and has 2 currently";

/** A drain's message as the drain renders it (workflows/drain/status.ts), so the two cannot drift apart. */
function rendered(wave: Partial<NonNullable<DrainStatus['wave']>>, extra: Partial<DrainStatus> = {}): string {
  return drainMessage({
    ...emptyStatus('n1'),
    phase: 'Draining',
    startedAt: '2026-01-01T10:01:00Z',
    wave: { order: 0, evicting: [], blocked: [], waitingCompletion: [], ...wave },
    ...extra,
  });
}
const blockedBy = (pods: string[], reason = PDB) => rendered({ blocked: [{ reason, pdbs: ['web-pdb'], pods }] });
const drainingNode = (name: string, drain: string | undefined, over: Partial<CycleNodeStatus> = {}): CycleNodeStatus => ({ nodeName: name, phase: 'DrainingPods', drainMessage: drain, ...over });
const cycling = (nodes: CycleNodeStatus[], extra: Partial<CycleStatus> = {}): CycleStatus => ({
  phase: 'WaitingTermination',
  message: `${nodes.length} nodes draining`,
  nodes,
  nodesCycled: 0,
  nodesTotal: nodes.length,
  ...extra,
});
const statusOf = (s: CycleStatus, prev?: CycleNodeRequestStatus, taskFailure?: TaskFailure) =>
  requestStatus({ prev, workflow: wf, state: s, observedGeneration: 1, taskFailure, now: t1 });

describe('drainBlockers', () => {
  test('a refused eviction is a blocker: its pods and reason, one line per reason', () => {
    const msg = rendered({
      evicting: ['ns/leaving-0'],
      blocked: [
        { reason: PDB, pdbs: ['web-pdb'], pods: ['ns/web-0', 'ns/web-1'] },
        { reason: 'conflict, will retry: x', pdbs: [], pods: ['ns/other'] },
      ],
    });
    expect(drainBlockers(msg)).toEqual([`Pods ns/web-0, ns/web-1: ${PDB}`, 'Pod ns/other: conflict, will retry: x']);
  });

  test('pods leaving, pods running to completion, later waves and finished drains are not', () => {
    expect(drainBlockers(rendered({ evicting: ['ns/a', 'ns/b'], waitingCompletion: ['ns/job-0'] }, { later: [{ order: 10, pods: ['ns/db-0'] }] }))).toEqual([]);
    expect(drainBlockers(drainMessage({ ...emptyStatus('n1'), phase: 'Drained', evicted: 3 }))).toEqual([]);
    expect(drainBlockers(undefined)).toEqual([]);
    expect(drainBlockers('')).toEqual([]);
  });

  test('pods that came back (pausing before a re-eviction, or left on the node) are not; an invalid DrainRule that holds the drain is', () => {
    const returning = [{ pod: 'ns/sticky-1', reason: 'returns after eviction: tolerates node.kubernetes.io/unschedulable (ReplicaSet ns/sticky evicted 3 times in this drain); left on the node' }];
    const paused = { reason: 'came back after eviction (1 of 3 times); evicted again after a pause', pdbs: [], pods: ['ns/sticky-2'] };
    expect(drainBlockers(rendered({ blocked: [paused] }, { returning }))).toEqual([]);
    // #24.2: a drained node's lines naming the pods it keeps (skipped, returning) block nothing.
    const kept = drainMessage({ ...emptyStatus('n1'), phase: 'Drained', evicted: 3, skipped: [{ pod: 'ns/keep', reason: 'DrainRule keep' }], returning });
    expect(kept.split('\n')).toHaveLength(3);
    expect(drainBlockers(kept)).toEqual([]);
    const held = drainMessage({ ...emptyStatus('n1'), phase: 'Draining', heldBy: ['DrainRule bad is invalid: spec.drain.order: too big'] });
    expect(drainBlockers(held)).toEqual(['DrainRule bad is invalid: spec.drain.order: too big']);
  });
});

describe('a blocked drain in the request status', () => {
  test("the node's entry carries its drain message, only while it drains", () => {
    const msg = blockedBy(['ns/web-0']);
    const s = statusOf(cycling([drainingNode('n1', msg), { nodeName: 'n2', phase: 'DeletingNode', message: 'deleting', drainMessage: 'stale' }]));
    expect(s.nodes).toEqual([
      { name: 'n1', phase: 'DrainingPods', message: msg },
      { name: 'n2', phase: 'DeletingNode', message: 'deleting' },
    ]);
    // Its own message first, then the drain's.
    expect(statusOf(cycling([drainingNode('n1', 'drain', { message: 'own' })])).nodes![0]!.message).toBe('own\ndrain');
  });

  test("Ready: the request's message, then each draining node in Cluster API's shape, blocked ones first", () => {
    const msg = blockedBy(['ns/web-0', 'ns/web-1']);
    const s = statusOf(cycling([drainingNode('a', rendered({ evicting: ['ns/x'] })), drainingNode('b', msg), { nodeName: 'c', phase: 'Pending' }]));
    expect(cond(s, 'Ready')).toMatchObject({ status: 'Unknown', reason: 'WaitingTermination' });
    expect(cond(s, 'Ready').message).toBe(
      [
        '3 nodes draining',
        '* Node b: Drain not completed yet (started at 2026-01-01T10:01:00Z), wave order 0:',
        `  * Pods ns/web-0, ns/web-1: ${PDB}`,
        '* Node a: Drain not completed yet (started at 2026-01-01T10:01:00Z), wave order 0:',
        '  * Pod ns/x: deletionTimestamp set, but still not removed from the Node',
      ].join('\n'),
    );
    // The request's own message stays the workflow's; Progressing keeps the count.
    expect(s.message).toBe('3 nodes draining');
    expect(cond(s, 'Progressing').message).toBe('0/3 nodes cycled');
  });

  test('beyond three draining nodes, Ready counts the rest', () => {
    const nodes = ['n1', 'n2', 'n3', 'n4', 'n5'].map((n) => ({ name: n, phase: 'DrainingPods' as const, message: `Drain of ${n}` }));
    expect(readyMessage('5 nodes draining', nodes)).toBe('5 nodes draining\n* Node n1: Drain of n1\n* Node n2: Drain of n2\n* Node n3: Drain of n3\n* 2 more nodes draining');
    expect(readyMessage('m', [{ name: 'n1', phase: 'DrainingPods' }])).toBe('m'); // no drain message yet
  });

  test('the same blocked state again is no change; a bridge restart (state from status) keeps it', () => {
    const a = statusOf(cycling([drainingNode('n1', blockedBy(['ns/web-0']))]));
    expect(statusChanged(a, statusOf(cycling([drainingNode('n1', blockedBy(['ns/web-0']))]), a))).toBe(false);
    const restarted = requestStatus({ prev: a, workflow: wf, state: stateFromStatus(a), observedGeneration: 1, now: t2 });
    expect(statusChanged(a, restarted)).toBe(false);
  });
});

describe('statusEvents', () => {
  const blockedEvents = (prev: CycleNodeRequestStatus | undefined, next: CycleNodeRequestStatus) => statusEvents(prev, next, wf.workflowId).filter((e) => e.reason === 'DrainBlocked');

  test('one Warning DrainBlocked when a drain becomes blocked, naming the node, pods and reason', () => {
    const before = statusOf(cycling([drainingNode('n1', rendered({ evicting: ['ns/web-0'] }))]));
    const after = statusOf(cycling([drainingNode('n1', blockedBy(['ns/web-0']))]), before);
    const ev = blockedEvents(before, after);
    expect(ev).toEqual([
      {
        type: 'Warning',
        reason: 'DrainBlocked',
        message: `drain of node n1 is blocked:\n* Pod ns/web-0: ${PDB}`,
        dedup: `${wf.workflowId}/DrainBlocked/n1/Pod ns/web-0`,
      },
    ]);
    // The first sight of a node already blocked counts too (no earlier status).
    expect(blockedEvents(undefined, after)).toHaveLength(1);
  });

  test('none while it stays blocked, even as the refusal text or the pods change', () => {
    const a = statusOf(cycling([drainingNode('n1', blockedBy(['ns/web-0']))]));
    const b = statusOf(cycling([drainingNode('n1', blockedBy(['ns/web-0', 'ns/web-1'], PDB.replace('has 2', 'has 3')))]), a);
    expect(statusChanged(a, b)).toBe(true);
    expect(blockedEvents(a, b)).toEqual([]);
  });

  test('unblocked, then blocked again by other pods: a new Event; by the same pods: the same one (deduplicated)', () => {
    const a = statusOf(cycling([drainingNode('n1', blockedBy(['ns/web-0']))]));
    const free = statusOf(cycling([drainingNode('n1', rendered({ evicting: ['ns/web-0'] }))]), a);
    expect(blockedEvents(a, free)).toEqual([]);
    const again = blockedEvents(free, statusOf(cycling([drainingNode('n1', blockedBy(['ns/db-0']))]), free));
    expect(again).toHaveLength(1);
    expect(again[0]!.dedup).not.toBe(blockedEvents(undefined, a)[0]!.dedup);
    expect(blockedEvents(free, statusOf(cycling([drainingNode('n1', blockedBy(['ns/web-0']))]), free))[0]!.dedup).toBe(blockedEvents(undefined, a)[0]!.dedup);
  });

  test('the phase change Event is among them', () => {
    const a = statusOf(cycling([], { phase: 'ScalingUp', message: 'up' }));
    const b = statusOf(cycling([], { phase: 'CordoningNode', message: 'cordon' }), a);
    expect(statusEvents(a, b, wf.workflowId)).toEqual([{ type: 'Normal', reason: 'PhaseCordoningNode', message: 'ScalingUp → CordoningNode: cordon', dedup: `${wf.workflowId}/ScalingUp->CordoningNode` }]);
  });
});

// ---- a workflow task that keeps failing ---------------------------------------------------------

describe('a failing workflow task', () => {
  const child = `${wf.workflowId}/node/n1`;
  const failure = (over: Partial<TaskFailure> = {}): TaskFailure => ({ workflowId: child, runId: 'r1', attempt: 4, error: 'RangeError: Invalid time value', eventId: '11', ...over });
  const running = cycling([{ nodeName: 'n1', phase: 'Pending' }], { message: '1 nodes draining' });

  test('Ready=False WorkflowTaskFailing, and the message, name the workflow and the error; the phase stays', () => {
    const s = statusOf(running, undefined, failure());
    const text = `workflow task of ${child} keeps failing (Temporal retries it until the workflow code or its input is fixed): RangeError: Invalid time value`;
    expect(s.phase).toBe('WaitingTermination');
    expect(s.message).toBe(text);
    expect(cond(s, 'Ready')).toEqual({ type: 'Ready', status: 'False', reason: 'WorkflowTaskFailing', message: text, lastTransitionTime: '2026-01-01T10:05:00Z', observedGeneration: 1 });
    expect(cond(s, 'Progressing')).toMatchObject({ status: 'True', reason: 'WaitingTermination' });
  });

  test('more attempts are no change; the failure gone, the status is the workflow’s again', () => {
    const a = statusOf(running, undefined, failure());
    expect(statusChanged(a, statusOf(running, a, failure({ attempt: 9 })))).toBe(false);
    const fixed = statusOf(running, a);
    expect(fixed.message).toBe('1 nodes draining');
    expect(cond(fixed, 'Ready')).toMatchObject({ status: 'Unknown', reason: 'WaitingTermination' });
  });

  test('an ended workflow is not held back by a failure seen before', () => {
    const done = statusOf(cycling([], { phase: 'Successful', message: 'ok' }), undefined, failure());
    expect(cond(done, 'Ready')).toMatchObject({ status: 'True', reason: 'Successful' });
  });

  test('one Warning Event when the failure starts (with its attempt), none while it lasts', () => {
    const before = statusOf(running);
    const a = statusOf(running, before, failure());
    const ev = statusEvents(before, a, wf.workflowId, failure()).filter((e) => e.reason === 'WorkflowTaskFailing');
    expect(ev).toEqual([
      {
        type: 'Warning',
        reason: 'WorkflowTaskFailing',
        message: `${a.message} (attempt 4)`,
        dedup: `${child}/r1/WorkflowTaskFailing/11`,
      },
    ]);
    const later = statusOf(running, a, failure({ attempt: 7 }));
    expect(statusEvents(a, later, wf.workflowId, failure({ attempt: 7 }))).toEqual([]);
  });
});

describe('mayCreateNodeStatuses', () => {
  const live = { metadata: {}, status: { workflowId: wf.workflowId, phase: 'WaitingTermination' as const } };
  test('only while the request lives: not deleted, its end not recorded', () => {
    expect(mayCreateNodeStatuses(live, wf.workflowId)).toBe(true);
    expect(mayCreateNodeStatuses({ metadata: {} }, wf.workflowId)).toBe(true);
    expect(mayCreateNodeStatuses({ ...live, metadata: { deletionTimestamp: '2026-01-01T10:00:00Z' } }, wf.workflowId)).toBe(false);
    expect(mayCreateNodeStatuses({ metadata: {}, status: { workflowId: wf.workflowId, phase: 'Successful' } }, wf.workflowId)).toBe(false);
    expect(mayCreateNodeStatuses({ metadata: {}, status: { workflowId: wf.workflowId, phase: 'Failed' } }, wf.workflowId)).toBe(false);
    // A Failed status of no workflow (an invalid spec, since fixed) does not stop the new workflow's.
    expect(mayCreateNodeStatuses({ metadata: {}, status: { phase: 'Failed' } }, wf.workflowId)).toBe(true);
  });
});

describe('#24.4 a closed workflow: every generation counts as observed', () => {
  test('a newer generation is observed; applied only when the workflow acted on it itself', () => {
    expect(closedGeneration(2, 1)).toEqual({ generation: 2, applied: false });
    expect(closedGeneration(2, 1, 2)).toEqual({ generation: 2, applied: true }); // setStage wrote it, then the workflow ended
    expect(closedGeneration(3, 1, 2)).toEqual({ generation: 3, applied: false });
    expect(closedGeneration(2, undefined)).toEqual({ generation: 2, applied: false });
  });

  test('nothing to do when the generation is observed already, or unknown', () => {
    expect(closedGeneration(2, 2)).toBeUndefined();
    expect(closedGeneration(undefined, 1)).toBeUndefined();
  });
});
