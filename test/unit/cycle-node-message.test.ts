// A cycled node's final message says what its drain left: pods skipped and why, a volume wait
// skipped or timed out (test/integration/drain-unreachable.test.ts sees it on the stack).
import { drainedMessage } from '../../workflows/cycle/node.js';

describe('drainedMessage', () => {
  test('an ordinary drain: the pods evicted', () => {
    expect(drainedMessage({ evicted: 1, skipped: [], volumes: { message: 'all volumes detached', timedOut: false } })).toBe('1 pod evicted');
    expect(drainedMessage({ evicted: 3, skipped: [] })).toBe('3 pods evicted');
  });
  test('an unreachable node: the stuck pods and the volume wait not made', () => {
    const skipped = [
      { pod: 'a/x', reason: 'terminating on an unreachable node' },
      { pod: 'a/y', reason: 'terminating on an unreachable node' },
    ];
    expect(drainedMessage({ evicted: 2, skipped, volumes: { message: 'not waited for: node n1 is unreachable', timedOut: false } })).toBe(
      '2 pods evicted; 2 Pods skipped (2 terminating on an unreachable node); volumes not waited for: node n1 is unreachable',
    );
  });
  test('a volume wait that timed out, on one line', () => {
    expect(drainedMessage({ evicted: 0, skipped: [], volumes: { message: 'pvc-1 still attached\n(volumeDetachTimeout reached; continuing)', timedOut: true } })).toBe(
      '0 pods evicted; volumes pvc-1 still attached (volumeDetachTimeout reached; continuing)',
    );
  });
});
