// The drain's activities ask the drain's operator decisions before each eviction or deletion
// (activities/drain/decisions.ts): the verdict per purpose, and the sharing of one query among
// checks that wait together without ever answering a check from a query older than it.
import { coalesced, decisionCheck, verdict } from '../../activities/drain/decisions.js';

const pod = (name: string) => ({ namespace: 'app', name, uid: `uid-${name}` });

describe('#24.1 operator decisions before each eviction or deletion', () => {
  test('#24.1 a skip stops evictions and force-deletes; a pending force-delete stops evictions only', () => {
    const d = { 'app/kept': 'Skip', 'app/forced': 'ForceDelete' } as const;
    expect(verdict(d, pod('kept'), 'drain')).toEqual({ go: false, why: 'not sent: the operator skipped the pod' });
    expect(verdict(d, pod('kept'), 'forceDelete')).toMatchObject({ go: false });
    expect(verdict(d, pod('forced'), 'drain')).toEqual({ go: false, why: 'not sent: the operator force-deletes the pod' });
    expect(verdict(d, pod('forced'), 'forceDelete')).toEqual({ go: true });
    expect(verdict(d, pod('other'), 'drain')).toEqual({ go: true });
    expect(verdict(d, { namespace: 'other', name: 'kept', uid: 'x' }, 'drain')).toEqual({ go: true });
  });

  test('#24.1 checks share a query only when it started after they asked', async () => {
    const started: Array<(v: number) => void> = [];
    const fresh = coalesced(() => new Promise<number>((r) => started.push(r)));
    const a = fresh(); // starts query 0
    const b = fresh(); // query 0 started before b asked: b waits for query 1
    const c = fresh(); // shares query 1 with b
    expect(started).toHaveLength(1);
    started[0]!(10);
    expect(await a).toBe(10);
    await new Promise((r) => setImmediate(r));
    expect(started).toHaveLength(2);
    started[1]!(11);
    expect([await b, await c]).toEqual([11, 11]);
    const d = fresh(); // nothing out: a query of its own
    expect(started).toHaveLength(3);
    started[2]!(12);
    expect(await d).toBe(12);
  });

  test('#24.1 a failed query fails only the checks that waited for it', async () => {
    let n = 0;
    const fresh = coalesced(async () => {
      if (n++ === 0) throw new Error('no answer');
      return n;
    });
    await expect(fresh()).rejects.toThrow('no answer');
    expect(await fresh()).toBe(2);
  });

  test('#24.1 outside a drain activity there is nobody to ask', () => {
    expect(decisionCheck()).toBeUndefined();
  });
});
