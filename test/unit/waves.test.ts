import { evictionBackoffMs } from '../../activities/drain/wave-wait.js';
import { planWave } from '../../workflows/drain/waves.js';
import { podKey, type PodVerdict } from '../../shared/drain.js';

function v(key: string, over: Partial<PodVerdict> = {}): PodVerdict {
  const [namespace, name] = key.split('/') as [string, string];
  return {
    namespace,
    name,
    uid: `uid-${name}`,
    action: 'Evict',
    order: 0,
    podType: 'Default',
    reason: 'default',
    warnings: [],
    terminating: false,
    phase: 'Running',
    claims: [],
    ...over,
  };
}

const keys = (ps: PodVerdict[]) => ps.map(podKey);

describe('planWave', () => {
  test('the lowest order goes first; higher orders wait in later', () => {
    const plan = planWave([v('a/late', { order: 5 }), v('a/first', { order: 1 }), v('a/mid', { order: 3 })]);
    expect(plan.done).toBe(false);
    expect(plan.order).toBe(1);
    expect(keys(plan.toEvict)).toEqual(['a/first']);
    expect(plan.later.map((l) => [l.order, keys(l.pods)])).toEqual([
      [3, ['a/mid']],
      [5, ['a/late']],
    ]);
  });

  test('a still-terminating pod of a lower order holds back higher orders', () => {
    const plan = planWave([v('a/old', { order: 0, terminating: true }), v('a/next', { order: 1 })]);
    expect(plan.order).toBe(0);
    expect(plan.toEvict).toEqual([]);
    expect(keys(plan.terminating)).toEqual(['a/old']);
    expect(keys(plan.later[0]!.pods)).toEqual(['a/next']);
    expect(plan.done).toBe(false);
  });

  test('a WaitCompleted pod holds back higher orders and is never evicted', () => {
    const plan = planWave([v('a/job', { action: 'WaitCompleted' }), v('a/web', { order: 2 })]);
    expect(plan.order).toBe(0);
    expect(plan.toEvict).toEqual([]);
    expect(keys(plan.waitingCompletion)).toEqual(['a/job']);
    expect(plan.later).toEqual([{ order: 2, pods: [expect.objectContaining({ name: 'web' })] }]);
  });

  test('WaitCompleted pods of the current wave are not evicted alongside Evict pods', () => {
    const plan = planWave([v('a/job', { action: 'WaitCompleted' }), v('a/web')]);
    expect(keys(plan.toEvict)).toEqual(['a/web']);
    expect(keys(plan.waitingCompletion)).toEqual(['a/job']);
  });

  test('a terminating pod is never evicted (or deleted) twice', () => {
    const plan = planWave([v('a/evicted', { terminating: true }), v('a/deleted', { action: 'Delete', terminating: true }), v('a/fresh')]);
    expect(keys(plan.toEvict)).toEqual(['a/fresh']);
    expect(plan.toDelete).toEqual([]);
    expect(keys(plan.terminating)).toEqual(['a/deleted', 'a/evicted']);
  });

  test('a terminating WaitCompleted pod is listed as terminating, not as waiting for completion', () => {
    const plan = planWave([v('a/job', { action: 'WaitCompleted', terminating: true })]);
    expect(keys(plan.terminating)).toEqual(['a/job']);
    expect(plan.waitingCompletion).toEqual([]);
  });

  test('finished pods of the current wave are deleted, not evicted', () => {
    const plan = planWave([v('a/done', { action: 'Delete', phase: 'Succeeded' }), v('a/web'), v('a/later', { action: 'Delete', order: 1 })]);
    expect(keys(plan.toDelete)).toEqual(['a/done']);
    expect(keys(plan.toEvict)).toEqual(['a/web']);
    expect(keys(plan.later[0]!.pods)).toEqual(['a/later']);
  });

  test('Skip pods and operator-skipped pods are excluded and listed in skipped', () => {
    const plan = planWave([v('a/ds', { action: 'Skip', reason: 'DaemonSet-managed' }), v('a/stuck', { order: -1 }), v('a/web', { order: 1 })], {
      skipped: new Set(['a/stuck']),
    });
    expect(keys(plan.skipped)).toEqual(['a/ds', 'a/stuck']);
    expect(plan.order).toBe(1);
    expect(keys(plan.toEvict)).toEqual(['a/web']);
    expect(plan.later).toEqual([]);
  });

  test('an operator-skipped pod no longer holds back the next wave even while terminating', () => {
    const plan = planWave([v('a/stuck', { terminating: true }), v('a/next', { order: 1 })], { skipped: new Set(['a/stuck']) });
    expect(plan.order).toBe(1);
    expect(plan.terminating).toEqual([]);
    expect(keys(plan.toEvict)).toEqual(['a/next']);
  });

  test('later is grouped by order ascending, whatever the input order', () => {
    const plan = planWave([v('a/p9', { order: 9 }), v('a/p0'), v('a/p2b', { order: 2 }), v('a/p4', { order: 4 }), v('a/p2a', { order: 2 })]);
    expect(plan.later.map((l) => l.order)).toEqual([2, 4, 9]);
    expect(keys(plan.later[0]!.pods)).toEqual(['a/p2a', 'a/p2b']);
  });

  test('done when only skipped pods remain', () => {
    const plan = planWave([v('a/ds', { action: 'Skip' }), v('a/op')], { skipped: new Set(['a/op']) });
    expect(plan.order).toBeUndefined();
    expect(plan).toMatchObject({ done: true, toEvict: [], toDelete: [], terminating: [], waitingCompletion: [], later: [] });
    expect(keys(plan.skipped)).toEqual(['a/ds', 'a/op']);
  });

  test('done when there are no pods at all', () => {
    expect(planWave([])).toMatchObject({ done: true, skipped: [] });
  });

  test('not done while only a terminating pod remains', () => {
    const plan = planWave([v('a/leaving', { terminating: true })]);
    expect(plan.done).toBe(false);
    expect(plan.toEvict).toEqual([]);
  });

  test('outputs are sorted by namespace/name regardless of input order', () => {
    const input = [v('z/a'), v('b/c'), v('b/a', { terminating: true }), v('a/z'), v('c/s', { action: 'Skip' }), v('a/s', { action: 'Skip' }), v('b/b', { action: 'Delete' }), v('a/d', { action: 'Delete' })];
    const forward = planWave(input);
    const backward = planWave([...input].reverse());
    expect(keys(forward.toEvict)).toEqual(['a/z', 'b/c', 'z/a']);
    expect(keys(forward.toDelete)).toEqual(['a/d', 'b/b']);
    expect(keys(forward.skipped)).toEqual(['a/s', 'c/s']);
    expect(backward).toEqual(forward);
  });

  test('negative orders go before order 0', () => {
    const plan = planWave([v('a/zero'), v('a/neg', { order: -10 }), v('a/neg2', { order: -3 })]);
    expect(plan.order).toBe(-10);
    expect(keys(plan.toEvict)).toEqual(['a/neg']);
    expect(plan.later.map((l) => l.order)).toEqual([-3, 0]);
  });
});

describe('evictionBackoffMs', () => {
  test('doubles from 1 s and is capped at 10 s', () => {
    expect([1, 2, 3, 4, 5, 6, 20].map(evictionBackoffMs)).toEqual([1000, 2000, 4000, 8000, 10_000, 10_000, 10_000]);
  });

  test('a first (zeroth) attempt waits 1 s', () => {
    expect(evictionBackoffMs(0)).toBe(1000);
  });
});
