// #28: a request's selection is a cursor over the nodes that existed when it resolved. A Node's
// creationTimestamp has whole seconds only, so "existed" means created in a second before the
// resolve's: a replacement launched in the resolve's own second must not pass for an old node.
import { existedAt, type GroupNode } from '../../activities/cycle/resolve.js';

const node = (createdAt: string): GroupNode => ({ name: 'n', providerID: 'p', nodeGroup: 'g', ready: true, cordoned: false, createdAtMs: Date.parse(createdAt) });

describe('#28 the selection is the nodes that existed at the resolve', () => {
  test('#28 a node created in the resolve\'s own second (a replacement launched right after it) is not selected; one created a second before is', () => {
    const resolvedAtMs = Date.parse('2026-11-28T05:00:12.700Z');
    expect(existedAt(node('2026-11-28T05:00:12Z'), resolvedAtMs)).toBe(false); // e.g. launched at 12.950, stamped 12
    expect(existedAt(node('2026-11-28T05:00:13Z'), resolvedAtMs)).toBe(false);
    expect(existedAt(node('2026-11-28T05:00:11Z'), resolvedAtMs)).toBe(true);
  });
});
