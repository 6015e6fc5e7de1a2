// #28: the bridge's history long-polls are limited (starter/bridge/poll-slots.ts): at 2,000 Idle
// NodeMaintenances one long-poll each passed Temporal's per-namespace limit and the bridge never caught up.
import { historyPollsFromEnv, PollSlots } from '../../starter/bridge/poll-slots.js';

/** A long-poll the test answers: `answer()` ends it. */
function held() {
  let answer!: () => void;
  const done = new Promise<void>((r) => (answer = r));
  return { answer, poll: () => done };
}
const tick = () => new Promise((r) => setImmediate(r));

describe('#28 the bridge holds a bounded number of history long-polls', () => {
  test('#28 at most `max` polls run at once; a poll that brought events goes before the quiet ones; an abort leaves the queue', async () => {
    const slots = new PollSlots(2);
    const never = new AbortController().signal;
    const started: string[] = [];
    const polls = new Map<string, ReturnType<typeof held>>();
    const start = (name: string, busy: boolean, signal = never) => {
      const h = held();
      polls.set(name, h);
      return slots.run(busy, signal, () => (started.push(name), h.poll()));
    };
    const a = start('quiet-a', false);
    const b = start('quiet-b', false);
    const c = start('quiet-c', false);
    const gone = new AbortController();
    const d = start('quiet-d', false, gone.signal);
    const e = start('busy-e', true);
    await tick();
    expect([started, slots.inUse, slots.waiting]).toEqual([['quiet-a', 'quiet-b'], 2, 3]);
    gone.abort(new Error('untracked'));
    await expect(d).rejects.toThrow('untracked');
    polls.get('quiet-a')!.answer();
    await a;
    await tick();
    expect(started).toEqual(['quiet-a', 'quiet-b', 'busy-e']); // the busy one first, though it came last
    polls.get('quiet-b')!.answer();
    await b;
    await tick();
    expect(started).toEqual(['quiet-a', 'quiet-b', 'busy-e', 'quiet-c']);
    polls.get('busy-e')!.answer();
    polls.get('quiet-c')!.answer();
    await Promise.all([c, e]);
    expect([slots.inUse, slots.waiting]).toEqual([0, 0]);
  });

  test('#28 SLIPWAY_BRIDGE_HISTORY_POLLS sets the limit (500 by default, under Temporal\'s 1,200 a namespace and API)', () => {
    expect(historyPollsFromEnv({})).toBe(500);
    expect(historyPollsFromEnv({ SLIPWAY_BRIDGE_HISTORY_POLLS: '50' })).toBe(50);
    expect(historyPollsFromEnv({ SLIPWAY_BRIDGE_HISTORY_POLLS: 'lots' })).toBe(500);
  });
});
