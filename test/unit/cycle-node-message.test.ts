// A cycled node's final message says what its drain did and left: pods evicted and deleted, pods
// that stayed and why, a volume wait skipped or timed out (test/integration/drain-unreachable.test.ts
// sees it on the stack); the request's Successful message names nodes deleted with pods on them.
import { cycledMessage, drainedMessage } from '../../workflows/cycle/node.js';
import type { CycleNodeStatus } from '../../workflows/cycle/types.js';

const none = { forced: [], returning: [] };
const STICKY = 'returns after eviction: tolerates node.kubernetes.io/unschedulable (Pods of ReplicaSet app/sticky evicted 4 times in this drain); left on the node';

describe('drainedMessage', () => {
  test('an ordinary drain: the pods evicted', () => {
    expect(drainedMessage({ ...none, evicted: 1, skipped: [], volumes: { message: 'all volumes detached', timedOut: false } })).toBe('1 Pod evicted');
    expect(drainedMessage({ ...none, evicted: 3, skipped: [] })).toBe('3 Pods evicted');
  });
  test('an unreachable node: the stuck pods and the volume wait not made', () => {
    const skipped = [
      { pod: 'a/x', reason: 'terminating on an unreachable node' },
      { pod: 'a/y', reason: 'terminating on an unreachable node' },
    ];
    expect(drainedMessage({ ...none, evicted: 2, skipped, volumes: { message: 'not waited for: node n1 is unreachable', timedOut: false } })).toBe(
      '2 Pods evicted; 2 Pods skipped (2 terminating on an unreachable node: a/x, a/y); volumes not waited for: node n1 is unreachable',
    );
  });
  test('a volume wait that timed out, on one line', () => {
    expect(drainedMessage({ ...none, evicted: 0, skipped: [], volumes: { message: 'pvc-1 still attached\n(volumeDetachTimeout reached; continuing)', timedOut: true } })).toBe(
      '0 Pods evicted; volumes pvc-1 still attached (volumeDetachTimeout reached; continuing)',
    );
  });
  test('#24.2 a cycled node\'s message names, on one line, the pods that stayed on it and why: skipped by a rule, left after returning', () => {
    const msg = drainedMessage({
      evicted: 6,
      forced: [],
      skipped: [{ pod: 'app/keep-1', reason: 'DrainRule keep' }],
      returning: [{ pod: 'app/sticky-4', reason: STICKY }],
    });
    expect(msg).toBe(
      '6 Pods evicted; 1 Pod skipped (1 by DrainRule keep: app/keep-1); 1 Pod left on the Node: app/sticky-4 (returns after eviction: tolerates node.kubernetes.io/unschedulable (Pods of ReplicaSet app/sticky evicted 4 times in this drain))',
    );
    expect(msg).not.toContain('\n');
    // Many pods: a few named, the rest counted.
    const many = Array.from({ length: 9 }, (_, i) => ({ pod: `app/sticky-${i}`, reason: STICKY }));
    expect(drainedMessage({ evicted: 0, forced: [], skipped: [], returning: many })).toContain('9 Pods left on the Node: app/sticky-0, app/sticky-1, app/sticky-2 and 6 more (returns after eviction');
  });
  test('#24.3 a skip and a force-delete are counted apart: "1 force-deleted", "1 Pod skipped"', () => {
    const forced = [
      { pod: 'app/keep', action: 'Skip' as const, by: 'signal' as const, at: 't', reason: 'kept by hand' },
      { pod: 'app/stuck', action: 'ForceDelete' as const, by: 'signal' as const, at: 't', reason: 'disk gone' },
    ];
    expect(drainedMessage({ evicted: 1, forced, returning: [], skipped: [{ pod: 'app/keep', reason: 'kept by hand' }] })).toBe('1 Pod evicted, 1 force-deleted; 1 Pod skipped (1 kept by hand: app/keep)');
  });
});

describe('cycledMessage', () => {
  const node = (nodeName: string, over: Partial<CycleNodeStatus> = {}): CycleNodeStatus => ({ nodeName, phase: 'Successful', ...over });
  test('the nodes cycled', () => {
    expect(cycledMessage([node('n1'), node('n2')])).toBe('2 nodes cycled');
    expect(cycledMessage([node('n1')])).toBe('1 node cycled');
  });
  test('#24.2 a request whose node was deleted with a pod on it says so in its Successful message, naming the node and the pod', () => {
    expect(cycledMessage([node('n1', { returning: [{ pod: 'app/sticky-4', reason: STICKY }] }), node('n2')])).toBe(
      '2 nodes cycled; 1 Pod was left on a node when deleted, having come back after every eviction: n1 (app/sticky-4)',
    );
  });
});
