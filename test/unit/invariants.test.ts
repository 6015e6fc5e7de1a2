// The chaos invariants (stack/invariants.ts) judge records, so each one is shown to fail here on a
// record that breaks it, and to pass on a clean run's records.
import type { AuditEvent } from '../../stack/audit-log.js';
import { INVARIANTS, judge, type Evidence, type InvariantName, type PodRecord } from '../../stack/invariants.js';

const T0 = Date.parse('2026-11-26T04:00:00Z');
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
const SLIPWAY = 'node-fetch/1.0';
const KWOK = 'kwok/v0.7.0 (linux/amd64)';
const evict = (name: string, s: number, code = 201): AuditEvent => ({ verb: 'create', stage: 'ResponseComplete', requestReceivedTimestamp: at(s), objectRef: { resource: 'pods', subresource: 'eviction', namespace: 'ns', name }, responseStatus: { code }, userAgent: SLIPWAY });
const gone = (name: string, s: number, userAgent = KWOK): AuditEvent => ({ verb: 'delete', stage: 'ResponseComplete', requestReceivedTimestamp: at(s), objectRef: { resource: 'pods', namespace: 'ns', name }, responseStatus: { code: 200 }, userAgent });
const nodeDelete = (name: string, s: number): AuditEvent => ({ verb: 'delete', stage: 'ResponseComplete', requestReceivedTimestamp: at(s), objectRef: { resource: 'nodes', name }, responseStatus: { code: 200 }, userAgent: SLIPWAY });
const pod = (name: string, wave: number, extra: Partial<PodRecord> = {}): PodRecord => ({ namespace: 'ns', name, uid: `u-${name}`, node: 'n1', skip: false, wave, controller: name.split('-')[0], seenAtMs: T0 - 60_000, ...extra });

/** A clean drain of n1: wave 0 (a-1, a-2) leaves, then wave 1 (b-1), then the node goes; keep-1 is skipped. */
function clean(): Evidence {
  return {
    pods: [pod('a-1', 0), pod('a-2', 0), pod('b-1', 1), pod('keep-1', 0, { skip: true })],
    audit: [evict('a-1', 1), evict('a-2', 1), evict('b-1', 3, 429), gone('a-1', 2), gone('a-2', 2.5), evict('b-1', 4), gone('b-1', 5), nodeDelete('n1', 6), gone('keep-1', 7, 'kube-controller-manager/v1.33')],
    drainedNodes: ['n1'],
    nodesAtEnd: [{ name: 'n2', unschedulable: false, detached: false }],
    cloud: { notInService: [], detachedRunning: [] },
    capacity: [{ atMs: 0, inService: 2, desired: 2 }, { atMs: 1000, inService: 3, desired: 2 }],
    outcome: { phase: 'Successful', tookMs: 20_000, limitMs: 300_000 },
    runningWorkflows: [],
    budget: { name: 'b', limit: 1, mostDisrupted: 1, ledgerAtEnd: [] },
  };
}

const failing = (ev: Evidence): InvariantName[] => judge(ev).filter((v) => !v.ok).map((v) => v.name);

test('a clean run passes every invariant, and every invariant is judged', () => {
  const verdicts = judge(clean());
  expect(verdicts.map((v) => v.name).sort()).toEqual(Object.keys(INVARIANTS).sort());
  expect(verdicts.filter((v) => !v.ok)).toEqual([]);
});

test('skip-kept fails when Slipway evicts or deletes a skipped pod (the GC deleting it with its node is fine)', () => {
  const ev = clean();
  ev.audit.push(evict('keep-1', 2));
  expect(failing(ev)).toEqual(['skip-kept']);
  const del = clean();
  del.audit.push(gone('keep-1', 2, SLIPWAY));
  expect(failing(del)).toEqual(['skip-kept']);
});

test('waves-ordered fails when a wave-1 pod is evicted while a wave-0 pod is still on the node', () => {
  const ev = clean();
  ev.audit.push(evict('b-1', 2.2)); // a-2 leaves at 2.5
  expect(failing(ev)).toContain('waves-ordered');
  expect(judge(ev).find((v) => v.name === 'waves-ordered')!.detail).toMatch(/b-1 \(wave 1\) evicted while a-2 \(wave 0\)/);
});

test('node-after-drain fails when the node is deleted with a pod the drain had to evict', () => {
  const ev = clean();
  ev.audit.splice(ev.audit.findIndex((e) => e.objectRef?.resource === 'nodes'), 1, nodeDelete('n1', 4.5));
  expect(failing(ev)).toEqual(['node-after-drain']);
});

test('node-after-drain fails when the node is deleted before its VolumeAttachment was gone (audit delete, or the detach record)', () => {
  const vaDelete = (name: string, s: number): AuditEvent => ({ verb: 'delete', stage: 'ResponseComplete', requestReceivedTimestamp: at(s), objectRef: { resource: 'volumeattachments', name }, responseStatus: { code: 200 }, userAgent: 'attacher' });
  const ok = clean();
  ok.volumes = [{ name: 'va-1', node: 'n1' }];
  ok.audit.splice(ok.audit.findIndex((e) => e.objectRef?.resource === 'nodes'), 0, vaDelete('va-1', 5.5));
  expect(failing(ok)).toEqual([]);
  expect(judge(ok).find((v) => v.name === 'node-after-drain')!.detail).toBe('1 nodes deleted after their drain and 1 volume detach');

  const late = clean();
  late.volumes = [{ name: 'va-1', node: 'n1' }];
  late.audit.push(vaDelete('va-1', 6.5)); // the node went at 6
  expect(failing(late)).toEqual(['node-after-drain']);
  expect(judge(late).find((v) => v.name === 'node-after-drain')!.detail).toBe('n1 deleted with VolumeAttachment va-1 still on it');

  const never = clean();
  never.volumes = [{ name: 'va-1', node: 'n1' }, { name: 'va-2', node: 'n2' }]; // n2 is not deleted: not judged
  expect(failing(never)).toEqual(['node-after-drain']);

  const recorded = clean(); // no audit record (an older audit policy): the detach seen by the runner counts
  recorded.volumes = [{ name: 'va-1', node: 'n1', detachedAtMs: T0 + 5800 }];
  expect(failing(recorded)).toEqual([]);
  recorded.volumes[0]!.detachedAtMs = T0 + 6200;
  expect(failing(recorded)).toEqual(['node-after-drain']);
});

test('evicted-once fails on a pod evicted twice, and on a controller evicted more than its pods plus 3 returns', () => {
  const ev = clean();
  ev.audit.push(evict('a-1', 1.5));
  expect(failing(ev)).toEqual(['evicted-once']);
  const returns = clean();
  returns.pods.push(...[1, 2, 3, 4].map((i) => pod(`b-r${i}`, 1, { controller: 'b', seenAtMs: T0 + 4500 })));
  returns.audit.push(...[1, 2, 3, 4].map((i) => evict(`b-r${i}`, 4.6)), ...[1, 2, 3, 4].map((i) => gone(`b-r${i}`, 4.9)));
  expect(failing(returns)).toEqual(['evicted-once']);
  returns.returnsAllowed = 4;
  expect(failing(returns)).toEqual([]);
});

test('nothing-stranded fails on a cordoned, detached or maintenance-held node, or an instance detached or not InService', () => {
  for (const change of [
    (e: Evidence) => (e.nodesAtEnd[0]!.unschedulable = true),
    (e: Evidence) => (e.nodesAtEnd[0]!.detached = true),
    (e: Evidence) => (e.nodesAtEnd[0]!.held = true),
    (e: Evidence) => (e.cloud!.detachedRunning = ['i-1']),
    (e: Evidence) => (e.cloud!.notInService = ['i-2 (Standby)']),
  ]) {
    const ev = clean();
    change(ev);
    expect(failing(ev)).toEqual(['nothing-stranded']);
  }
});

test('capacity-kept fails when the group dips below its desired capacity', () => {
  const ev = clean();
  ev.capacity.push({ atMs: 2000, inService: 1, desired: 2 });
  expect(failing(ev)).toEqual(['capacity-kept']);
});

test('ended-in-time fails on a request still running, cancelled, or over its limit', () => {
  for (const outcome of [{ phase: '', tookMs: 1, limitMs: 10 }, { phase: 'Cancelled', tookMs: 1, limitMs: 10 }, { phase: 'Failed', tookMs: 11, limitMs: 10 }]) {
    const ev = clean();
    ev.outcome = outcome;
    expect(failing(ev)).toEqual(['ended-in-time']);
  }
});

test('no-orphan-workflow fails when a workflow of the finished request still runs', () => {
  const ev = clean();
  ev.runningWorkflows = ['cnr/ns/x/u/node/n1/drain'];
  expect(failing(ev)).toEqual(['no-orphan-workflow']);
});

test('budget-kept fails when more nodes were cordoned at once than the budget allows, or its ledger keeps an entry after the end', () => {
  const over = clean();
  over.budget = { name: 'b', limit: 1, mostDisrupted: 2, ledgerAtEnd: [] };
  expect(failing(over)).toEqual(['budget-kept']);
  expect(judge(over).find((v) => v.name === 'budget-kept')!.detail).toBe("2 nodes disrupted at once under b's limit of 1");
  const leak = clean();
  leak.budget = { name: 'b', limit: 1, mostDisrupted: 1, ledgerAtEnd: ['cnr/ns/x/u/n1'] };
  expect(failing(leak)).toEqual(['budget-kept']);
  const none = clean();
  delete none.budget;
  expect(judge(none).find((v) => v.name === 'budget-kept')).toEqual({ name: 'budget-kept', ok: true, detail: 'no budget in this scenario' });
});
