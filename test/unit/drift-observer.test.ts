// The drift observer's decisions (activities/node-group/plan.ts) and AWS's drift witness
// (activities/providers/aws-drift.ts), without I/O.
import { driftReason } from '../../activities/providers/aws-drift.js';
import { driftRequestName, planDriftPass, type PassInput } from '../../activities/node-group/plan.js';
import { windowOf } from '../../activities/node-group/observe.js';
import { NodeGroupSpec } from '../../api/node-group-kind.js';
import { nodeGroupObserverWorkflowId, parseWorkflowId } from '../../workflows/ids.js';

const specInput = { requestNamespace: 'ops', template: { nodeGroupName: 'workers', selector: { matchLabels: { pool: 'workers' } }, cycleSettings: { method: 'Drain' as const, concurrency: 1 } }, driftObserver: { interval: '1m' } };
const now = new Date('2026-11-26T07:00:00Z');
const node = (name: string, pool = 'workers') => ({ name, providerID: `kwok://${name}`, labels: { pool } });

function input(over: Partial<PassInput> = {}): PassInput {
  return {
    name: 'workers',
    uid: 'u1',
    generation: 3,
    spec: { ok: true, value: NodeGroupSpec.parse(specInput), input: specInput },
    disabled: false,
    drift: [{ group: 'workers', instances: [{ providerID: 'kwok://a', reason: 'template-hash v1, the group\'s v2' }, { providerID: 'kwok://b', reason: 'template-hash v1, the group\'s v2' }] }],
    nodes: [node('a'), node('b'), node('c')],
    requests: [],
    now,
    ...over,
  };
}

describe('planDriftPass', () => {
  test('drifted nodes: one request from the template, for exactly those nodes, labelled, with an Event', () => {
    const p = planDriftPass(input());
    const name = driftRequestName('workers', 'u1', ['a', 'b']);
    expect(p.create).toEqual({ name, spec: { ...specInput.template, nodeNames: ['a', 'b'] } });
    expect(p.event).toMatchObject({ type: 'Normal', reason: 'DriftDetected' });
    expect(p.event!.message).toContain(`created CycleNodeRequest ops/${name}`);
    expect(p.event!.message).toContain('a: template-hash v1');
    expect(p.status.driftedNodes!.map((d) => d.name)).toEqual(['a', 'b']);
    expect(p.status.lastRequest).toBe(`ops/${name}`);
    expect(p.status.conditions).toEqual([expect.objectContaining({ type: 'Drifted', status: 'True', reason: 'RequestCreated', observedGeneration: 3 })]);
  });

  test('#25.2 the status carries the generation it was written from (observedGeneration)', () => {
    expect(planDriftPass(input()).status.observedGeneration).toBe(3);
  });

  test('the request name depends on the nodes and the object, not on the order or the moment', () => {
    expect(driftRequestName('workers', 'u1', ['b', 'a'])).toBe(driftRequestName('workers', 'u1', ['a', 'b']));
    expect(driftRequestName('workers', 'u1', ['a'])).not.toBe(driftRequestName('workers', 'u1', ['a', 'b']));
    expect(driftRequestName('workers', 'u2', ['a'])).not.toBe(driftRequestName('workers', 'u1', ['a']));
    expect(driftRequestName('x'.repeat(300), 'u', ['a']).length).toBeLessThanOrEqual(253);
  });

  test('no drift: nothing created, Drifted=False', () => {
    const p = planDriftPass(input({ drift: [{ group: 'workers', instances: [] }] }));
    expect(p.create).toBeUndefined();
    expect(p.event).toBeUndefined();
    expect(p.status.conditions![0]).toMatchObject({ status: 'False', reason: 'NoDrift' });
  });

  test('a drifted instance outside the template selector, or with no Node yet, is not cycled', () => {
    const p = planDriftPass(input({ nodes: [node('a', 'other')], drift: [{ group: 'workers', instances: [{ providerID: 'kwok://a', reason: 'r' }, { providerID: 'kwok://ghost', reason: 'r' }] }] }));
    expect(p.create).toBeUndefined();
    expect(p.status.driftedNodes).toEqual([]);
  });

  test('never a second request while one runs: its own, or anyone\'s for the same cloud group', () => {
    const own = planDriftPass(input({ requests: [{ namespace: 'ops', name: 'workers-drift-1', phase: 'ScalingUp', ours: true, groups: ['workers'] }] }));
    expect(own.create).toBeUndefined();
    expect(own.status.conditions![0]).toMatchObject({ reason: 'RequestRunning' });
    expect(own.status.message).toContain('waiting for CycleNodeRequest ops/workers-drift-1 to finish');
    const theirs = planDriftPass(input({ requests: [{ namespace: 'team', name: 'manual', ours: false, groups: ['workers'] }] }));
    expect(theirs.create).toBeUndefined();
    const unrelated = planDriftPass(input({ requests: [{ namespace: 'team', name: 'other', phase: 'Pending', ours: false, groups: ['gpu'] }, { namespace: 'ops', name: 'old', phase: 'Successful', ours: true, groups: ['workers'] }] }));
    expect(unrelated.create).toBeDefined();
  });

  test('the same nodes\' request ended: not made again on its own (delete it to retry)', () => {
    const name = driftRequestName('workers', 'u1', ['a', 'b']);
    const p = planDriftPass(input({ requests: [{ namespace: 'ops', name, phase: 'Failed', ours: true, groups: ['workers'] }] }));
    expect(p.create).toBeUndefined();
    expect(p.status.message).toContain(`CycleNodeRequest ${name} for these nodes ended Failed: delete it to try again`);
  });

  test('disabled by the annotation: reports the drift, creates nothing', () => {
    const p = planDriftPass(input({ disabled: true }));
    expect(p.create).toBeUndefined();
    expect(p.status.conditions![0]).toMatchObject({ status: 'True', reason: 'ObserverDisabled' });
  });

  test('an invalid spec or an unknown group: a Warning naming it, nothing created', () => {
    const bad = planDriftPass(input({ spec: { ok: false, error: 'spec.template.selector: selector must not be empty' } }));
    expect(bad.create).toBeUndefined();
    expect(bad.event).toMatchObject({ type: 'Warning', reason: 'InvalidSpec' });
    expect(bad.status.message).toContain('spec.template.selector');
    const unknown = planDriftPass(input({ drift: [{ group: 'workers', error: 'unknown node group workers (provider kwok)' }] }));
    expect(unknown.create).toBeUndefined();
    expect(unknown.event).toMatchObject({ type: 'Warning', reason: 'NodeGroupUnreadable' });
    expect(unknown.status.message).toContain('unknown node group workers');
  });

  test('a schedule: outside its window the drift is reported and nothing made; inside, the request', () => {
    const closed = planDriftPass(input({ window: { open: false, text: '"0 2 * * *" UTC for 3h' } }));
    expect(closed.create).toBeUndefined();
    expect(closed.status.conditions![0]).toMatchObject({ status: 'True', reason: 'OutsideSchedule' });
    expect(closed.status.message).toContain('outside its schedule ("0 2 * * *" UTC for 3h)');
    expect(planDriftPass(input({ window: { open: true, text: 'x' } })).create).toBeDefined();
  });

  test('windowOf: open from the firing for its duration, UTC; none without a schedule', () => {
    const o = { schedule: '0 2 * * *', duration: '3h' };
    expect(windowOf(o, new Date('2026-11-26T01:59:00Z'))!.open).toBe(false);
    expect(windowOf(o, new Date('2026-11-26T02:00:00Z'))!.open).toBe(true);
    expect(windowOf(o, new Date('2026-11-26T04:59:00Z'))!.open).toBe(true);
    expect(windowOf(o, new Date('2026-11-26T05:00:00Z'))!.open).toBe(false);
    expect(windowOf({ schedule: undefined, duration: undefined }, now)).toBeUndefined();
    expect(windowOf(undefined, now)).toBeUndefined();
  });

  test('lastTransitionTime stays while Drifted keeps its status', () => {
    const first = planDriftPass(input());
    const later = planDriftPass(input({ now: new Date('2026-11-26T08:00:00Z'), status: first.status, requests: [{ namespace: 'ops', name: 'x', ours: true, groups: ['workers'] }] }));
    expect(later.status.conditions![0]!.lastTransitionTime).toBe(first.status.conditions![0]!.lastTransitionTime);
    expect(later.status.observedTime).toBe('2026-11-26T08:00:00Z');
  });
});

describe('driftReason (AWS)', () => {
  const t = { launchTemplateId: 'lt-1', version: '3', imageId: 'ami-new', instanceType: 'm5.large' };
  const i = { instanceId: 'i-1', zone: 'us-east-1a', launchTemplateId: 'lt-1', version: '3', imageId: 'ami-new', instanceType: 'm5.large' };
  test('the same template, version, image and type: no drift', () => expect(driftReason(t, i)).toBeUndefined());
  test('another version', () => expect(driftReason(t, { ...i, version: '2' })).toBe("launch template version 2, the group's 3"));
  test('another image, the same version recorded', () => expect(driftReason(t, { ...i, imageId: 'ami-old' })).toBe("image ami-old, the template's ami-new"));
  test('another template', () => expect(driftReason(t, { ...i, launchTemplateId: 'lt-0' })).toContain('launch template lt-0'));
  test('a launch configuration group', () => expect(driftReason({ launchConfigurationName: 'lc-2' }, { ...i, launchTemplateId: undefined, launchConfigurationName: 'lc-1' })).toBe("launch configuration lc-1, the group's lc-2"));
});

test('the NodeGroup spec: schedule and duration go together', () => {
  expect(NodeGroupSpec.safeParse({ ...specInput, driftObserver: { schedule: '0 2 * * *' } }).error?.issues[0]?.message).toContain('schedule and duration go together');
  expect(NodeGroupSpec.safeParse({ ...specInput, driftObserver: { schedule: '0 2 * * *', duration: '3h' } }).success).toBe(true);
});

test('the observer\'s workflow ID reads back', () => {
  expect(parseWorkflowId(nodeGroupObserverWorkflowId({ name: 'workers', uid: 'u1' }))).toEqual({ kind: 'nodeGroupObserver', name: 'workers', uid: 'u1' });
});
