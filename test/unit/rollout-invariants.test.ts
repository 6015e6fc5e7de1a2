// A rolling maintenance's chaos invariants (stack/rollout-invariants.ts), each broken once on a
// synthetic Node watch. Named after docs/rolling-maintenance.md RM-7.2.
import { judgeRollout, ROLLOUT_INVARIANTS, type NodeVersion } from '../../stack/rollout-invariants.js';

let at = 0;
const v = (node: string, state: Partial<NodeVersion> = {}): NodeVersion => ({ node, atMs: at++, deleted: false, cordoned: false, held: false, done: false, ...state });
const held = (node: string, done = false) => v(node, { cordoned: true, held: true, done });
const free = (node: string, done = true) => v(node, { done });

/** n0 then n1, one at a time, each let go after its work was marked done. */
const clean = (): NodeVersion[] => [v('n0'), v('n1'), held('n0'), held('n0', true), free('n0'), held('n1'), held('n1', true), free('n1')];
const failing = (versions: NodeVersion[], limit = 1, leftAtEnd: string[] = []) => judgeRollout({ versions, limit, leftAtEnd }).filter((x) => !x.ok).map((x) => x.name);

describe('RM-7.2 the rollout\'s chaos invariants', () => {
  test('RM-7.2 a clean rollout passes every one, and every one is judged', () => {
    const verdicts = judgeRollout({ versions: clean(), limit: 1, leftAtEnd: [] });
    expect(verdicts.map((x) => x.name).sort()).toEqual(Object.keys(ROLLOUT_INVARIANTS).sort());
    expect(verdicts.filter((x) => !x.ok)).toEqual([]);
  });
  test('RM-7.2 each broken once', () => {
    expect(failing([held('n0'), held('n1')])).toEqual(['rollout-within-limit']);
    expect(failing([held('n0', true), free('n0'), held('n0')])).toEqual(['rollout-started-once']);
    expect(failing([held('n0'), free('n0', false)])).toEqual(['rollout-released-after-done']);
    expect(failing(clean(), 1, ['n1'])).toEqual(['rollout-nothing-held']);
    // A deleted node is not a release, and two under a limit of 2 are within it.
    expect(failing([held('n0'), v('n0', { deleted: true }), held('n1'), held('n2')], 2)).toEqual([]);
  });
});
