import { nodeCounts } from '../../workflows/drain/counts.js';
import type { PodVerdict } from '../../shared/drain.js';

function v(name: string, over: Partial<PodVerdict> = {}): PodVerdict {
  return { namespace: 'app', name, uid: `uid-${name}`, action: 'Evict', order: 0, podType: 'Default', reason: 'default', warnings: [], terminating: false, phase: 'Running', claims: [], targeted: true, ...over };
}
const none = { skipped: new Set<string>(), refused: new Set<string>(), leaving: new Set<string>() };

describe('nodeCounts (NM-1.7)', () => {
  test('pending: not yet asked to leave, targeted or not', () => {
    expect(nodeCounts([v('a'), v('b', { targeted: false })], none)).toEqual({ podsPendingEvictionRequest: 2, activeEvictionRequests: 0, podsBlocked: 0, podsKept: 0 });
  });

  test('active: evicted this pass, terminating, refused (also blocked), or a targeted WaitCompleted pod; an untargeted one is pending', () => {
    const pods = [v('evicted'), v('terminating', { terminating: true }), v('refused'), v('job', { action: 'WaitCompleted' }), v('later-job', { action: 'WaitCompleted', targeted: false })];
    const c = nodeCounts(pods, { ...none, refused: new Set(['app/refused']), leaving: new Set(['uid-evicted']) });
    expect(c).toEqual({ podsPendingEvictionRequest: 1, activeEvictionRequests: 4, podsBlocked: 1, podsKept: 0 });
  });

  test('Skip pods (label, rule, skipPod signal) and finished pods are not counted; kept pods are podsKept', () => {
    const pods = [v('skip', { action: 'Skip' }), v('signalled'), v('done', { phase: 'Succeeded', action: 'Delete' }), v('agent', { action: 'Skip', kept: true, podType: 'DaemonSet' })];
    expect(nodeCounts(pods, { ...none, skipped: new Set(['app/signalled']) })).toEqual({ podsPendingEvictionRequest: 0, activeEvictionRequests: 0, podsBlocked: 0, podsKept: 1 });
  });

  test('pending + active + kept = the non-Skip, non-terminal pods', () => {
    const pods = [v('a'), v('b', { terminating: true }), v('c', { kept: true, action: 'Skip' }), v('d', { action: 'Skip' }), v('e', { phase: 'Failed' }), v('f', { targeted: false })];
    const c = nodeCounts(pods, none);
    expect(c.podsPendingEvictionRequest + c.activeEvictionRequests + c.podsKept).toBe(4);
  });
});
