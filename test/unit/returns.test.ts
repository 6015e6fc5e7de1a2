// Pods that come back to the cordoned node are evicted a few times at most, with a pause, then left.
import { MAX_RETURN_EVICTIONS, ReturnsLedger, returnBackoffMs } from '../../workflows/drain/returns.js';
import type { PodVerdict } from '../../shared/drain.js';

const pod = (uid: string, over: Partial<PodVerdict> = {}): PodVerdict => ({
  namespace: 'app', name: `web-${uid}`, uid, action: 'Evict', order: 0, podType: 'Default', reason: 'default', warnings: [],
  terminating: false, phase: 'Running', claims: [], controller: 'ReplicaSet app/web-1', toleratesUnschedulable: true, ...over,
});

describe('ReturnsLedger', () => {
  test('pods on the node when draining started are never counted as arrivals', () => {
    const l = new ReturnsLedger();
    l.start([pod('a'), pod('b')]);
    l.record([pod('a'), pod('b')], 0);
    expect(l.isArrival(pod('a'))).toBe(false);
    expect(l.judge([pod('a'), pod('b')], 0)).toEqual({ left: new Map(), paused: new Map() });
  });

  test(`a controller's arrivals are evicted at most ${MAX_RETURN_EVICTIONS} times, with growing pauses, then left with the reason`, () => {
    const l = new ReturnsLedger();
    l.start([pod('a')]);
    let t = 0;
    for (let n = 0; n < MAX_RETURN_EVICTIONS; n++) {
      const arrival = pod(`r${n}`);
      // Before the pause has run, the arrival waits; after it, it is due (neither left nor paused).
      if (n > 0) {
        expect(l.judge([arrival], t).paused.get(arrival.uid)?.atMs).toBe(t + returnBackoffMs(n));
        t += returnBackoffMs(n);
      }
      expect(l.judge([arrival], t)).toEqual({ left: new Map(), paused: new Map() });
      l.record([arrival], t);
    }
    const again = pod('r-last');
    const v = l.judge([again], t + 3_600_000);
    expect(v.left.get(again.uid)).toBe(
      `returns after eviction: tolerates node.kubernetes.io/unschedulable (Pods of ReplicaSet app/web-1 evicted ${MAX_RETURN_EVICTIONS} times in this drain); left on the node`,
    );
  });

  test(`#24.3 "evicted N times" counts every eviction of the controller's pods in this drain: the first one and the ${MAX_RETURN_EVICTIONS} returns`, () => {
    const l = new ReturnsLedger();
    const first = pod('a');
    l.start([first, pod('b', { controller: 'ReplicaSet app/other' })]);
    l.record([first], 0); // the pod on the node when draining started: evicted once
    let t = 0;
    for (let n = 0; n < MAX_RETURN_EVICTIONS; n++) {
      t += returnBackoffMs(n);
      const arrival = pod(`r${n}`);
      expect(l.judge([arrival], t)).toEqual({ left: new Map(), paused: new Map() }); // the first eviction does not use up a return
      l.record([arrival], t);
    }
    const again = pod('r-last');
    expect(l.judge([again], t + 3_600_000).left.get(again.uid)).toContain(`(Pods of ReplicaSet app/web-1 evicted ${MAX_RETURN_EVICTIONS + 1} times in this drain)`);
    // The pause's words count the same way: after the first eviction and one return, 2 evictions.
    const m = new ReturnsLedger();
    m.start([first]);
    m.record([first], 0);
    m.record([pod('r0')], 0);
    expect(m.judge([pod('r1')], 1).paused.get('r1')!.reason).toBe(`came back after eviction (Pods of ReplicaSet app/web-1 evicted 2 times in this drain; 1 of at most ${MAX_RETURN_EVICTIONS} returns evicted); evicted again after a pause`);
    // Carried across continue-as-new.
    const back = new ReturnsLedger(JSON.parse(JSON.stringify(l.carry())));
    expect(back.judge([again], t + 3_600_000).left.get(again.uid)).toContain(`evicted ${MAX_RETURN_EVICTIONS + 1} times`);
  });

  test('arrivals of another controller are counted apart; skipped and terminating arrivals are not judged', () => {
    const l = new ReturnsLedger();
    l.start([]);
    for (let n = 0; n < MAX_RETURN_EVICTIONS; n++) l.record([pod(`r${n}`)], 0);
    const other = pod('o', { controller: 'StatefulSet app/db' });
    expect(l.judge([other], 100_000).left.size).toBe(0);
    expect(l.judge([pod('x', { action: 'Skip' }), pod('y', { terminating: true })], 100_000).left.size).toBe(0);
  });

  test('survives continue-as-new: the carry restores the start set and the counts', () => {
    const l = new ReturnsLedger();
    l.start([pod('a')]);
    for (let n = 0; n < MAX_RETURN_EVICTIONS; n++) l.record([pod(`r${n}`)], 0);
    const back = new ReturnsLedger(JSON.parse(JSON.stringify(l.carry())));
    expect(back.isArrival(pod('a'))).toBe(false);
    expect(back.judge([pod('z')], 100_000).left.has('z')).toBe(true);
  });

  test('a pod without a controller is counted by its own name; the reason without the toleration is generic', () => {
    const l = new ReturnsLedger();
    l.start([]);
    const bare = (uid: string) => pod(uid, { controller: undefined, toleratesUnschedulable: false, name: 'bare' });
    for (let n = 0; n < MAX_RETURN_EVICTIONS; n++) l.record([bare(`b${n}`)], 0);
    expect(l.judge([bare('b9')], 100_000).left.get('b9')).toBe(`returns after eviction (Pod app/bare evicted ${MAX_RETURN_EVICTIONS} times in this drain); left on the node`);
  });
});
