// The bridge's pure mapping from a cycle workflow's state to CycleNodeRequest / CycleNodeStatus
// status: conditions and their transition times, change detection, closed workflows, invalid specs.
import { CycleNodeRequestSpec, type CycleNodeRequestStatus } from '../../api/cycle-node-request.js';
import type { CycleStatus } from '../../workflows/cycle/types.js';
import {
  canonical,
  closedNodes,
  closedState,
  invalidSpecMessage,
  invalidSpecStatus,
  isCycleStatus,
  mergePatchOf,
  nodeStatus,
  phaseEvent,
  requestStatus,
  setCondition,
  stateFromStatus,
  statusChanged,
} from '../../starter/bridge/status.js';

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
        { name: 'n1', providerID: 'kwok://n1', nodeGroup: 'g', phase: 'DrainingPods' },
        { name: 'n2', phase: 'Pending' },
      ],
      nodesCycled: 0,
      nodesTotal: 2,
      startedAt: '2026-01-01T10:00:00Z',
      workflowId: wf.workflowId,
      runId: 'run-1',
      observedGeneration: 3,
      conditions: [
        { type: 'Ready', status: 'Unknown', reason: 'ScalingUp', message: 'ScalingUp message', lastTransitionTime: '2026-01-01T10:00:00Z', observedGeneration: 3 },
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
