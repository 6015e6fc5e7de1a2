// Dependency locks (NM-5.9–5.13): the annotation parsers, classify's declarations, and the pure wave
// step that holds providers and promotes the pods that hold implicit locks.
import { lockAnnotation, nodeLocks, parseComponents, PROVIDES_ANNOTATION, REQUIRES_ANNOTATION, requiredComponents } from '../../api/dependency-locks.js';
import { classifyPod, type ClassifyContext, type PodFacts } from '../../activities/drain/classify.js';
import type { PodVerdict } from '../../shared/drain.js';
import { applyLocks } from '../../workflows/drain/locks.js';
import { planWave } from '../../workflows/drain/waves.js';

function v(name: string, over: Partial<PodVerdict> = {}): PodVerdict {
  return { namespace: 'ns', name, uid: `uid-${name}`, action: 'Evict', order: 0, podType: 'Default', reason: 'default', warnings: [], terminating: false, phase: 'Running', claims: [], ...over };
}
const none = new Set<string>();
/** planWave then applyLocks, as the drain workflow does. */
function plan(pods: PodVerdict[], locks?: Record<string, string[]>, skipped: ReadonlySet<string> = none) {
  return applyLocks(planWave(pods.filter((p) => p.targeted !== false)), pods, locks, skipped);
}
const evicting = (r: ReturnType<typeof plan>) => r.plan.toEvict.filter((p) => !r.locks.held.has(p.uid)).map((p) => p.name).sort();

describe('annotations', () => {
  test('parseComponents: comma-separated, trimmed, sorted, deduplicated; a non-DNS name still counts, with a warning', () => {
    expect(parseComponents(PROVIDES_ANNOTATION, ' l2-agent , dhcp,l2-agent')).toEqual({ components: ['dhcp', 'l2-agent'], warnings: [] });
    const bad = parseComponents(REQUIRES_ANNOTATION, 'L2_Agent');
    expect(bad.components).toEqual(['L2_Agent']);
    expect(bad.warnings).toEqual(['annotation slipway.dev/requires: component "L2_Agent" is not a DNS label (compared as written)']);
    expect(parseComponents(PROVIDES_ANNOTATION, ' , ')).toEqual({ components: [], warnings: ['annotation slipway.dev/provides names no component; ignored'] });
    expect(parseComponents(PROVIDES_ANNOTATION, undefined)).toEqual({ components: [], warnings: [] });
  });

  test('nodeLocks: one entry per component, holders sorted; other annotations and a lock without holder are ignored', () => {
    expect(
      nodeLocks({ [lockAnnotation('l2-agent', 'nova-compute')]: '', [lockAnnotation('l2-agent', 'cinder')]: '', 'l2-agent.lock.slipway.dev/': '', 'example.com/x': 'y', [lockAnnotation('dhcp', 'a')]: 'any' }),
    ).toEqual({ dhcp: ['a'], 'l2-agent': ['cinder', 'nova-compute'] });
    expect(nodeLocks(undefined)).toEqual({});
  });

  test('requiredComponents reads the maintenance-required labels back', () => {
    expect(requiredComponents({ 'maintenance-required.slipway.dev/l2-agent': 'true', 'kubernetes.io/hostname': 'n' })).toEqual(['l2-agent']);
  });

  test('NM-5.9 classify carries provides and requires on the verdict, only when declared', () => {
    const facts = (annotations: Record<string, string>): PodFacts => ({
      namespace: 'ns', name: 'p', uid: 'u', labels: {}, annotations, phase: 'Running', hasEmptyDir: false, claims: [], priority: 0, toleratesUnschedulable: false,
      controller: { kind: 'ReplicaSet', name: 'rs', apiVersion: 'apps/v1' },
    });
    const ctx: ClassifyContext = { nodeLabels: {}, unreachable: false, nowMs: 0, daemonSetExists: () => false, namespaceLabels: () => ({}), rules: [] };
    expect(classifyPod(facts({ [PROVIDES_ANNOTATION]: 'l2-agent', [REQUIRES_ANNOTATION]: 'ovs' }), ctx)).toMatchObject({ provides: ['l2-agent'], requires: ['ovs'] });
    const plain = classifyPod(facts({}), ctx);
    expect(plain).not.toHaveProperty('provides');
    expect(plain).not.toHaveProperty('requires');
    expect(classifyPod(facts({ [PROVIDES_ANNOTATION]: 'Bad/Name' }), ctx).warnings).toContain('annotation slipway.dev/provides: component "Bad/Name" is not a DNS label (compared as written)');
  });
});

describe('applyLocks', () => {
  test('NM-5.9 a due provider is held while a node annotation locks its component; its reason names the component and holders (E5 b)', () => {
    const r = plan([v('l2', { provides: ['l2-agent'] }), v('nova')], { 'l2-agent': ['nova-compute'] });
    expect(r.locks.held.get('uid-l2')).toBe('held by dependency lock l2-agent (holders: nova-compute)');
    expect(evicting(r)).toEqual(['nova']);
    expect(r.plan.done).toBe(false); // the held provider is still in the wave: the node is not finished
    expect(r.locks.required).toEqual(['l2-agent']);
  });

  test('NM-5.9 once the lock is gone the provider is evicted', () => {
    const r = plan([v('l2', { provides: ['l2-agent'] })], {});
    expect(r.locks.held.size).toBe(0);
    expect(evicting(r)).toEqual(['l2']);
    expect(r.locks.required).toEqual([]);
  });

  test('NM-5.11 a pod that requires the component is promoted from a later wave and evicted first; the provider waits for it (E5 b′)', () => {
    const r = plan([v('l2', { provides: ['l2-agent'] }), v('nova', { order: 3, requires: ['l2-agent'] })], undefined);
    expect(r.locks.promoted.map((x) => [x.pod.name, x.message])).toEqual([['nova', 'evicted ahead of the drain plan: requires l2-agent provided by ns/l2']]);
    expect(evicting(r)).toEqual(['nova']);
    expect(r.locks.held.get('uid-l2')).toBe('held by dependency lock l2-agent (holders: pod ns/nova)');
    expect(r.plan.later).toEqual([]);
    expect(r.locks.holders).toEqual(['uid-nova']);
  });

  test('NM-5.11 an untargeted dependent (targets mode) is promoted too', () => {
    const r = plan([v('l2', { provides: ['l2-agent'], targeted: true }), v('nova', { requires: ['l2-agent'], targeted: false })]);
    expect(evicting(r)).toEqual(['nova']);
    expect(r.locks.held.has('uid-l2')).toBe(true);
  });

  test('NM-5.9 a terminating dependent still holds its implicit lock until it has left; a finished one holds nothing (NM-5.5)', () => {
    const leaving = plan([v('l2', { provides: ['l2-agent'] }), v('nova', { requires: ['l2-agent'], terminating: true })]);
    expect(leaving.locks.held.has('uid-l2')).toBe(true);
    expect(leaving.locks.promoted).toEqual([]);
    const done = plan([v('l2', { provides: ['l2-agent'] }), v('nova', { requires: ['l2-agent'], phase: 'Succeeded', action: 'Delete' })]);
    expect(done.locks.held.size).toBe(0);
  });

  test('NM-5.9 a dependent that may not be evicted (skipped by rule, by signal, or kept) is not promoted and keeps holding the provider', () => {
    for (const [dep, skipped] of [
      [v('nova', { requires: ['l2-agent'], action: 'Skip', reason: 'DrainRule keep' }), none],
      [v('nova', { requires: ['l2-agent'], order: 2 }), new Set(['ns/nova'])],
      [v('nova', { requires: ['l2-agent'], action: 'Skip', kept: true, podType: 'DaemonSet', targeted: true }), none],
    ] as const) {
      const r = plan([v('l2', { provides: ['l2-agent'] }), dep], undefined, skipped);
      expect(r.locks.promoted).toEqual([]);
      expect(r.locks.held.get('uid-l2')).toBe('held by dependency lock l2-agent (holders: pod ns/nova)');
    }
  });

  test('NM-5.13 a lock for a component no pod on the node provides, or whose provider is not yet due, has no effect', () => {
    expect(plan([v('web')], { 'l2-agent': ['nova-compute'] }).locks.held.size).toBe(0);
    const later = plan([v('web'), v('l2', { provides: ['l2-agent'], order: 5 })], { 'l2-agent': ['nova-compute'] });
    expect(later.locks.held.size).toBe(0);
    expect(evicting(later)).toEqual(['web']);
    expect(later.locks.required).toEqual([]);
  });

  test('NM-5.11 promotion is transitive: a promoted pod that provides something is held by its own dependents, who are promoted too', () => {
    const r = plan([v('ovs', { provides: ['ovs'] }), v('l2', { order: 1, provides: ['l2-agent'], requires: ['ovs'] }), v('nova', { order: 2, requires: ['l2-agent'] })]);
    expect(r.locks.promoted.map((x) => x.pod.name)).toEqual(['l2', 'nova']);
    expect(evicting(r)).toEqual(['nova']);
    expect([...r.locks.held.keys()].sort()).toEqual(['uid-l2', 'uid-ovs']);
    expect(r.locks.required).toEqual(['l2-agent', 'ovs']);
  });

  test('circular requires between two pods: both held, never evicted, each reason names the whole cycle', () => {
    const r = plan([v('a', { provides: ['x'], requires: ['y'] }), v('b', { order: 1, provides: ['y'], requires: ['x'] })]);
    expect(evicting(r)).toEqual([]);
    const msg = 'dependency cycle: ns/a requires y provided by ns/b; ns/b requires x provided by ns/a; none can leave first: remove a slipway.dev/requires annotation or force-delete one of them';
    expect(r.locks.held.get('uid-a')).toBe(msg);
    expect(r.locks.held.get('uid-b')).toBe(msg);
    expect(r.locks.cycles).toEqual([msg]);
  });

  test('a pod that provides and requires the same component does not lock itself', () => {
    const r = plan([v('self', { provides: ['c'], requires: ['c'] })]);
    expect(r.locks.held.size).toBe(0);
    expect(evicting(r)).toEqual(['self']);
  });

  test('a provider of two components, both locked, names both', () => {
    const r = plan([v('p', { provides: ['a', 'b'] }), v('q', { requires: ['b'] })], { a: ['op1'] });
    expect(r.locks.held.get('uid-p')).toBe('held by dependency locks a (holders: op1); b (holders: pod ns/q)');
  });
});
