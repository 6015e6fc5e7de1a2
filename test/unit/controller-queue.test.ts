// The bridge's keyed work queue and object cache: one reconcile per key at a time, bursts coalesced,
// failures retried with backoff; a late (older) watch event never rolls back a newer object.
import { ObjectCache } from '../../kube/controller/cache.js';
import { KeyedQueue } from '../../kube/controller/queue.js';

const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms));

describe('KeyedQueue', () => {
  test('a burst of adds for one key runs it at most twice (now, and once for everything since)', async () => {
    const runs: string[] = [];
    const q = new KeyedQueue(async (k) => {
      runs.push(k);
    });
    for (let i = 0; i < 10; i++) q.add('a');
    q.add('b');
    await tick(10);
    expect(runs.sort()).toEqual(['a', 'a', 'b']);
    await q.close();
  });

  test('never runs one key twice at once; an add during a run runs it once more after', async () => {
    let active = 0;
    let maxActive = 0;
    let runs = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const q = new KeyedQueue(async () => {
      active++;
      maxActive = Math.max(maxActive, active);
      runs++;
      if (runs === 1) await gate;
      active--;
    });
    q.add('a');
    await tick();
    q.add('a');
    q.add('a');
    release();
    await tick(10);
    expect([runs, maxActive]).toEqual([2, 1]);
    await q.close();
  });

  test('runs different keys concurrently up to the limit', async () => {
    let active = 0;
    let maxActive = 0;
    const q = new KeyedQueue(
      async () => {
        active++;
        maxActive = Math.max(maxActive, active);
        await tick(5);
        active--;
      },
      { concurrency: 3 },
    );
    for (let i = 0; i < 10; i++) q.add(`k${i}`);
    await tick(60);
    expect(maxActive).toBe(3);
    await q.close();
  });

  test('a failing key is retried with growing backoff, and reported', async () => {
    const at: number[] = [];
    const errors: number[] = [];
    const q = new KeyedQueue(
      async () => {
        at.push(Date.now());
        if (at.length < 3) throw new Error('boom');
      },
      { initialBackoffMs: 20, onError: (_k, _e, retryIn) => errors.push(retryIn) },
    );
    q.add('a');
    await tick(150);
    expect(at).toHaveLength(3);
    expect(errors).toEqual([20, 40]);
    expect(at[2]! - at[1]!).toBeGreaterThanOrEqual(35);
    await q.close();
  });

  test('close waits for the handlers in flight and takes no more keys', async () => {
    let done = false;
    const q = new KeyedQueue(async () => {
      await tick(20);
      done = true;
    });
    q.add('a');
    await tick();
    await q.close();
    expect(done).toBe(true);
    q.add('b');
    expect(q.size).toBe(0);
  });
});

describe('ObjectCache', () => {
  const obj = (name: string, uid: string, resourceVersion: string, extra: object = {}) => ({ metadata: { namespace: 'ns', name, uid, resourceVersion }, ...extra });

  test('an older version of the same object does not replace a newer one', () => {
    const c = new ObjectCache();
    c.put(obj('a', 'u1', '20', { v: 'new' }));
    c.put(obj('a', 'u1', '19', { v: 'old' }));
    expect(c.get('ns/a')).toMatchObject({ v: 'new' });
    c.put(obj('a', 'u1', '21', { v: 'newer' }));
    expect(c.get('ns/a')).toMatchObject({ v: 'newer' });
  });

  test('a recreated object (new uid) replaces the old one whatever its version', () => {
    const c = new ObjectCache();
    c.put(obj('a', 'u1', '20'));
    c.put(obj('a', 'u2', '5'));
    expect(c.get('ns/a')?.metadata?.uid).toBe('u2');
    c.delete(obj('a', 'u1', '21')); // the old one's deletion does not remove the new one
    expect(c.get('ns/a')?.metadata?.uid).toBe('u2');
  });

  test('replace returns the keys that changed, appeared or went away', () => {
    const c = new ObjectCache();
    c.put(obj('a', 'u1', '1'));
    c.put(obj('b', 'u2', '1'));
    c.put(obj('c', 'u3', '1'));
    const touched = c.replace([obj('a', 'u1', '1'), obj('b', 'u2', '2'), obj('d', 'u4', '1')]);
    expect(touched.sort()).toEqual(['ns/b', 'ns/c', 'ns/d']);
    expect(c.keys().sort()).toEqual(['ns/a', 'ns/b', 'ns/d']);
  });
});
