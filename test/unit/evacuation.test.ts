// Evacuation (spec §5, NM-5.1–5.7): evacuator registration from annotations, the requester names,
// the next step for a due pod (create, activate, hand over, fall back, wait, done), and withdrawal.
import { evacuatorsOf, EvacuationSpec, EvacuationStatus, type EvacuatorStatus } from '../../api/evacuation.js';
import { evacuatingMessage, nextEvacuationStep, withdraw, type EvacuationView } from '../../shared/evacuation.js';
import { cycleRequester, drainRequester, maintenanceRequester } from '../../api/names.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();
const running = { exists: true, phase: 'Running' };
const DEADLINE_S = 60;

/** An Evacuation with evacuators a (100), b (50), c (50) and the given status. */
function evac(status?: EvacuationView['status'], evacuators = [{ name: 'a', priority: 100 }, { name: 'b', priority: 50 }, { name: 'c', priority: 50 }]): EvacuationView {
  return { spec: { evacuators, progressDeadlineSeconds: DEADLINE_S }, status };
}
const progress = (name: string, over: Partial<EvacuatorStatus> = {}): EvacuatorStatus => ({ name, activatedTime: iso(T0), ...over });

describe('registration by annotation (spec §5)', () => {
  test('evacuator.slipway.dev/<name>: "<priority>" registers; higher priority first, ties by name; other annotations ignored', () => {
    const r = evacuatorsOf({
      'evacuator.slipway.dev/zeta': '10',
      'evacuator.slipway.dev/db-operator.test': '100000',
      'evacuator.slipway.dev/alpha': '10',
      'evacuator.slipway.dev/low': '0',
      'other.example/x': 'y',
    });
    expect(r).toEqual({
      evacuators: [{ name: 'db-operator.test', priority: 100000 }, { name: 'alpha', priority: 10 }, { name: 'zeta', priority: 10 }, { name: 'low', priority: 0 }],
      invalid: [],
    });
  });

  test('invalid registrations are reported, one line each, never thrown; the valid ones still count', () => {
    const r = evacuatorsOf({
      'evacuator.slipway.dev/ok': '5',
      'evacuator.slipway.dev/too-high': '100001',
      'evacuator.slipway.dev/negative': '-1',
      'evacuator.slipway.dev/padded': '007',
      'evacuator.slipway.dev/words': 'high',
      'evacuator.slipway.dev/-bad-name': '5',
      'evacuator.slipway.dev/': '5',
    });
    expect(r.evacuators).toEqual([{ name: 'ok', priority: 5 }]);
    expect(r.invalid).toHaveLength(6);
    expect(r.invalid).toContain('evacuator.slipway.dev/too-high: priority "100001" is not an integer from 0 to 100000');
    expect(r.invalid.find((l) => l.startsWith('evacuator.slipway.dev/-bad-name:'))).toMatch(/is not an evacuator name/);
    expect(evacuatorsOf(undefined)).toEqual({ evacuators: [], invalid: [] });
  });

  test('requester names have the forms nodemaintenance/<name>, cyclenoderequest/<ns>/<name>, drain/<node>', () => {
    expect([maintenanceRequester('m1'), cycleRequester('team', 'c1'), drainRequester('node-1')]).toEqual(['nodemaintenance/m1', 'cyclenoderequest/team/c1', 'drain/node-1']);
  });

  test('the spec defaults progressDeadlineSeconds to 1800 and bounds it to 10..21600; status cancellationPolicy defaults to Allow', () => {
    const base = { podRef: { name: 'p', uid: 'u' } };
    expect(EvacuationSpec.parse(base)).toEqual({ ...base, requesters: [], progressDeadlineSeconds: 1800, evacuators: [] });
    expect(EvacuationSpec.safeParse({ ...base, progressDeadlineSeconds: 9 }).success).toBe(false);
    expect(EvacuationSpec.safeParse({ ...base, progressDeadlineSeconds: 21601 }).success).toBe(false);
    expect(EvacuationSpec.safeParse({ ...base, progressDeadlineSeconds: 10 }).success).toBe(true);
    expect(EvacuationStatus.parse({}).cancellationPolicy).toBe('Allow');
  });
});

describe('nextEvacuationStep', () => {
  test('NM-5.5 a pod that is gone or terminal is done, whatever the Evacuation says', () => {
    expect(nextEvacuationStep(evac({ activeEvacuator: 'a', evacuators: [progress('a')] }), { exists: false }, T0)).toEqual({ kind: 'done', why: 'gone' });
    expect(nextEvacuationStep(undefined, { exists: true, phase: 'Succeeded' }, T0)).toEqual({ kind: 'done', why: 'terminal' });
    expect(nextEvacuationStep(evac(), { exists: true, phase: 'Failed' }, T0)).toEqual({ kind: 'done', why: 'terminal' });
  });

  test('NM-5.1 a due pod without an Evacuation gets one created', () => {
    expect(nextEvacuationStep(undefined, running, T0)).toEqual({ kind: 'create' });
    expect(nextEvacuationStep(undefined, { exists: true }, T0)).toEqual({ kind: 'create' });
  });

  test('NM-5.2 the highest-priority evacuator is activated first', () => {
    expect(nextEvacuationStep(evac(), running, T0)).toEqual({ kind: 'activate', name: 'a' });
    expect(nextEvacuationStep(evac({}), running, T0)).toEqual({ kind: 'activate', name: 'a' });
  });

  test('NM-5.2 ties go by name, even when the stored list is out of order', () => {
    const tied = evac(undefined, [{ name: 'zed', priority: 7 }, { name: 'abe', priority: 7 }]);
    expect(nextEvacuationStep(tied, running, T0)).toEqual({ kind: 'activate', name: 'abe' });
  });

  test('NM-5.2 an evacuator that completed before its turn is skipped, at activation and at hand-over', () => {
    expect(nextEvacuationStep(evac({ evacuators: [{ name: 'a', completed: true }] }), running, T0)).toEqual({ kind: 'activate', name: 'b' });
    const s = evac({ activeEvacuator: 'a', evacuators: [progress('a', { completed: true }), { name: 'b', completed: true }] });
    expect(nextEvacuationStep(s, running, T0)).toEqual({ kind: 'handOver', from: 'a', to: 'c', reason: 'completed' });
  });

  test('NM-5.2 an active evacuator that sets completed hands over to the next one at once', () => {
    const s = evac({ activeEvacuator: 'a', evacuators: [progress('a', { completed: true, heartbeatTime: iso(T0 + 1000) })] });
    expect(nextEvacuationStep(s, running, T0 + 2000)).toEqual({ kind: 'handOver', from: 'a', to: 'b', reason: 'completed' });
  });

  test('NM-5.2 / NM-5.4 within its deadline the active evacuator is waited for, with its message', () => {
    const s = evac({ activeEvacuator: 'b', evacuators: [progress('a', { completed: true }), progress('b', { message: 'copying 3 of 5 shards' })] });
    expect(nextEvacuationStep(s, running, T0 + 1000)).toEqual({ kind: 'wait', name: 'b', until: T0 + DEADLINE_S * 1000, message: 'evacuating by b: copying 3 of 5 shards' });
    expect(evacuatingMessage('db-operator.test', undefined)).toBe('evacuating by db-operator.test');
  });

  test('NM-5.2 the deadline runs from the later of activation and heartbeat: a heartbeat newer than activation extends it', () => {
    const beat = T0 + 45_000;
    const s = evac({ activeEvacuator: 'a', evacuators: [progress('a', { heartbeatTime: iso(beat) })] });
    const until = beat + DEADLINE_S * 1000;
    expect(nextEvacuationStep(s, running, T0 + DEADLINE_S * 1000 + 1)).toMatchObject({ kind: 'wait', until });
    // A heartbeat older than the activation (a clock behind, a stale write) does not shorten it.
    const stale = evac({ activeEvacuator: 'a', evacuators: [progress('a', { heartbeatTime: iso(T0 - 50_000) })] });
    expect(nextEvacuationStep(stale, running, T0 + 20_000)).toMatchObject({ kind: 'wait', until: T0 + DEADLINE_S * 1000 });
    // An unreadable heartbeat is ignored rather than trusted.
    const junk = evac({ activeEvacuator: 'a', evacuators: [progress('a', { heartbeatTime: 'yesterday' })] });
    expect(nextEvacuationStep(junk, running, T0)).toMatchObject({ kind: 'wait', until: T0 + DEADLINE_S * 1000 });
  });

  test('NM-5.2 the deadline exactly at its boundary: one millisecond before it waits, at it the next evacuator takes over', () => {
    const s = evac({ activeEvacuator: 'a', evacuators: [progress('a')] });
    const until = T0 + DEADLINE_S * 1000;
    expect(nextEvacuationStep(s, running, until - 1)).toMatchObject({ kind: 'wait', until });
    expect(nextEvacuationStep(s, running, until)).toEqual({ kind: 'handOver', from: 'a', to: 'b', reason: 'deadline' });
  });

  test('NM-5.3 the last evacuator running out (completed or deadline) falls back to eviction, naming it', () => {
    const last = (over: Partial<EvacuatorStatus>) => evac({ activeEvacuator: 'c', evacuators: [progress('a'), progress('b'), progress('c', over)] });
    expect(nextEvacuationStep(last({ completed: true }), running, T0)).toEqual({ kind: 'fallback', from: 'c', reason: 'completed' });
    expect(nextEvacuationStep(last({}), running, T0 + DEADLINE_S * 1000)).toEqual({ kind: 'fallback', from: 'c', reason: 'deadline' });
  });

  test('NM-5.3 no evacuator at all, or all completed before their turn, falls back at once; a decided fallback stays', () => {
    expect(nextEvacuationStep(evac(undefined, []), running, T0)).toEqual({ kind: 'fallback' });
    const allDone = evac({ evacuators: ['a', 'b', 'c'].map((n) => ({ name: n, completed: true })) });
    expect(nextEvacuationStep(allDone, running, T0)).toEqual({ kind: 'fallback' });
    expect(nextEvacuationStep(evac({ activeEvacuator: '', evacuators: [progress('a')] }), running, T0)).toEqual({ kind: 'fallback' });
  });

  test('an active evacuator whose activation time did not land is activated again (the write is idempotent)', () => {
    expect(nextEvacuationStep(evac({ activeEvacuator: 'b' }), running, T0)).toEqual({ kind: 'activate', name: 'b' });
    expect(nextEvacuationStep(evac({ activeEvacuator: 'b', evacuators: [{ name: 'b', heartbeatTime: iso(T0) }] }), running, T0)).toEqual({ kind: 'activate', name: 'b' });
  });

  test('an active name that is not registered restarts from the top', () => {
    expect(nextEvacuationStep(evac({ activeEvacuator: 'ghost' }), running, T0)).toEqual({ kind: 'activate', name: 'a' });
  });

  test('deterministic: the same input gives the same step', () => {
    const s = evac({ activeEvacuator: 'a', evacuators: [progress('a', { heartbeatTime: iso(T0 + 5) })] });
    expect(nextEvacuationStep(s, running, T0 + 10)).toEqual(nextEvacuationStep(JSON.parse(JSON.stringify(s)), running, T0 + 10));
  });
});

describe('withdraw (NM-5.6, NM-5.7)', () => {
  const me = maintenanceRequester('m1');
  const other = { name: cycleRequester('team', 'c1'), reason: 'cycle' };

  test('NM-5.6 the last requester deletes the Evacuation when the policy is Allow (or unset)', () => {
    expect(withdraw([{ name: me }], me, 'Allow')).toEqual({ action: 'delete' });
    expect(withdraw([{ name: me }], me, undefined)).toEqual({ action: 'delete' });
  });

  test('NM-5.6 with Forbid the last requester only leaves requesters; the Evacuation stays and the pod keeps leaving', () => {
    expect(withdraw([{ name: me }], me, 'Forbid')).toEqual({ action: 'update', requesters: [] });
  });

  test('NM-5.6 a requester that is not the last leaves requesters and keeps the others', () => {
    expect(withdraw([other, { name: me, reason: 'kernel' }], me, 'Allow')).toEqual({ action: 'update', requesters: [other] });
  });

  test('NM-5.7 withdrawing twice, or by one that never requested, changes nothing; an unrequested Allow object is deleted', () => {
    expect(withdraw([other], me, 'Allow')).toEqual({ action: 'leave' });
    expect(withdraw([], me, 'Forbid')).toEqual({ action: 'leave' });
    expect(withdraw([], me, 'Allow')).toEqual({ action: 'delete' });
  });
});
