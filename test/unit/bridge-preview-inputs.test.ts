// #24.5 The bridge's preview feed, pure part (starter/bridge/maintenance/preview-inputs.ts): which events change
// what an Idle maintenance's preview read, and the per-maintenance debounce of the signal.
import type { V1Node, V1Pod, V1PodDisruptionBudget } from '@kubernetes/client-node';
import { Debounce, FeedReach, mayMatter, PreviewWatchers, statusOnly, versionBefore } from '../../starter/bridge/maintenance/preview-inputs.js';
import type { PreviewInputs } from '../../shared/maintenance-preview.js';

const from = { pods: '1', pdbs: '1', drainRules: '1', nodes: '1' };
const selector = { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'In' as const, values: ['a'] }] }] };
const inputs = (over: Partial<PreviewInputs> = {}): PreviewInputs => ({ from, nodes: ['n1', 'n2'], namespaces: ['app'], blockingPdbs: [], ...over });

const at = (s: number) => new Date(Date.UTC(2026, 10, 27, 10, 0, s)).toISOString();
/** managedFields whose newest entry is the status subresource's (or not). */
const managed = (statusLast: boolean) => [
  { manager: 'kubectl', operation: 'Update', time: at(statusLast ? 1 : 2) as unknown as Date },
  { manager: 'kubelet', operation: 'Update', subresource: 'status', time: at(statusLast ? 2 : 1) as unknown as Date },
];
const pod = (node: string, o: { statusLast?: boolean; phase?: string; deleting?: boolean } = {}): V1Pod => ({
  metadata: { name: 'p', namespace: 'app', managedFields: managed(o.statusLast ?? false), ...(o.deleting ? { deletionTimestamp: new Date() } : {}) },
  spec: { nodeName: node, containers: [] },
  status: { phase: o.phase ?? 'Running' },
});
const pdb = (ns: string, allowed: number, statusLast = true): V1PodDisruptionBudget => ({
  metadata: { name: 'db', namespace: ns, managedFields: managed(statusLast) },
  status: { disruptionsAllowed: allowed, currentHealthy: 1, desiredHealthy: 1, expectedPods: 1 },
});
const node = (name: string, pool: string): V1Node => ({ metadata: { name, labels: { pool } } });

describe('#24.5 the preview feed judges events against what each Idle preview read', () => {
  test('a status-only update is one whose newest managedFields entry is the status subresource', () => {
    expect(statusOnly(pod('n1', { statusLast: true }))).toBe(true);
    expect(statusOnly(pod('n1', { statusLast: false }))).toBe(false);
    expect(statusOnly({ metadata: { name: 'x' } })).toBe(false);
  });

  test('pods: on a selected node, added, deleted, leaving, finishing or changed in spec count; a readiness flip and other nodes do not', () => {
    const w = new PreviewWatchers();
    w.set('/a', inputs(), selector);
    w.set('/b', inputs({ nodes: ['n3'] }), selector);
    expect(w.pod('ADDED', pod('n1'))).toEqual(['/a']);
    expect(w.pod('DELETED', pod('n3'))).toEqual(['/b']);
    expect(w.pod('MODIFIED', pod('n1', { statusLast: true }))).toEqual([]);
    expect(w.pod('MODIFIED', pod('n1', { statusLast: true, phase: 'Succeeded' }))).toEqual(['/a']);
    expect(w.pod('MODIFIED', pod('n1', { statusLast: true, deleting: true }))).toEqual(['/a']);
    expect(w.pod('MODIFIED', pod('n1', { statusLast: false }))).toEqual(['/a']);
    expect(w.pod('ADDED', pod('elsewhere'))).toEqual([]);
    expect(w.pod('ADDED', { metadata: { name: 'pending', namespace: 'app' } })).toEqual([]);
  });

  test('PDBs: of the previewed namespaces only; a counter update counts only when it flips blocking, once', () => {
    const w = new PreviewWatchers();
    w.set('/a', inputs({ blockingPdbs: [] }), selector);
    expect(w.pdb('ADDED', pdb('other', 0))).toEqual([]);
    expect(w.pdb('MODIFIED', pdb('app', 1))).toEqual([]); // counters, still not blocking
    expect(w.pdb('MODIFIED', pdb('app', 0))).toEqual(['/a']); // now blocks
    expect(w.pdb('MODIFIED', pdb('app', 0))).toEqual([]); // the same state again
    expect(w.pdb('MODIFIED', pdb('app', 0, false))).toEqual(['/a']); // its spec changed
    expect(w.pdb('DELETED', pdb('app', 0))).toEqual(['/a']);
    expect(w.pdb('ADDED', pdb('app', 1))).toEqual(['/a']);
  });

  test('DrainRules: any change but a status-only one, for every Idle maintenance', () => {
    const w = new PreviewWatchers();
    w.set('/a', inputs(), selector);
    w.set('/b', inputs({ nodes: [] }), selector);
    expect(w.rule('ADDED', { metadata: { name: 'r' } }).sort()).toEqual(['/a', '/b']);
    expect(w.rule('MODIFIED', { metadata: { name: 'r', managedFields: managed(true) } })).toEqual([]);
    expect(w.rule('DELETED', { metadata: { name: 'r' } }).sort()).toEqual(['/a', '/b']);
  });

  test('nodes: entering or leaving the selector counts, once; a node staying as it was does not', () => {
    const w = new PreviewWatchers();
    w.set('/a', inputs(), selector);
    expect(w.node('MODIFIED', node('n1', 'a'))).toEqual([]); // selected, still is (a heartbeat)
    expect(w.node('MODIFIED', node('n9', 'b'))).toEqual([]);
    expect(w.pod('ADDED', pod('n9'))).toEqual([]);
    expect(w.node('MODIFIED', node('n9', 'a'))).toEqual(['/a']); // enters
    expect(w.node('MODIFIED', node('n9', 'a'))).toEqual([]);
    expect(w.pod('ADDED', pod('n9'))).toEqual(['/a']); // its pods count before the next preview says so
    expect(w.node('MODIFIED', node('n2', 'b'))).toEqual(['/a']); // leaves
    expect(w.node('DELETED', node('n1', 'a'))).toEqual(['/a']);
  });

  test('a maintenance set again with the same inputs keeps what events taught it; new inputs or none replace it', () => {
    const w = new PreviewWatchers();
    w.set('/a', inputs(), selector);
    expect(w.node('MODIFIED', node('n9', 'a'))).toEqual(['/a']);
    w.set('/a', inputs(), selector);
    expect(w.node('MODIFIED', node('n9', 'a'))).toEqual([]);
    w.set('/a', inputs({ nodes: ['n5'] }), selector);
    expect(w.pod('ADDED', pod('n1'))).toEqual([]);
    expect(w.pod('ADDED', pod('n5'))).toEqual(['/a']);
    w.set('/a', undefined);
    expect(w.size).toBe(0);
    expect(w.pod('ADDED', pod('n5'))).toEqual([]);
    expect(w.rule('ADDED', { metadata: { name: 'r' } })).toEqual([]);
  });
});

describe('#24.5 the preview feed tells a maintenance once per settle window', () => {
  test('due once no change came for the settle time, or at the longest after the first; once', () => {
    const d = new Debounce(1_000, 5_000);
    expect(d.nextAt()).toBeUndefined();
    d.mark('/a', 0);
    d.mark('/a', 500);
    expect(d.nextAt()).toBe(1_500);
    expect(d.due(1_400)).toEqual([]);
    expect(d.due(1_500)).toEqual(['/a']);
    expect(d.due(1_600)).toEqual([]);
    // A steady stream of changes: due 5 s after the first, not never.
    for (let t = 10_000; t <= 16_000; t += 500) d.mark('/b', t);
    expect(d.nextAt()).toBe(15_000);
    expect(d.due(15_000)).toEqual(['/b']);
    d.mark('/c', 20_000);
    d.forget('/c');
    expect(d.nextAt()).toBeUndefined();
  });
});

describe('#26.1 the feed covers its own gaps: an Idle maintenance waits with no timer', () => {
  const read = (rv: string) => ({ pods: rv, pdbs: rv, drainRules: rv, nodes: rv });

  test('a maintenance first seen with a preview read before where the watches began, or before an event they told since, is behind; one read at or after is not', () => {
    const reach = new FeedReach();
    expect(reach.behind(read('5'))).toBe(false); // no watch yet: nothing told
    for (const what of ['pods', 'pdbs', 'drainRules', 'nodes'] as const) reach.reached(what, '100');
    expect(reach.behind(read('100'))).toBe(false); // the preview the watches began from
    expect(reach.behind(read('120'))).toBe(false); // read later: the watches tell it everything after
    expect(reach.behind(read('99'))).toBe(true); // read before (a restarted or new leader's older maintenances)
    reach.reached('pods', '130'); // a pod event at 130
    expect(reach.behind(read('120'))).toBe(true); // read before it, told the feed after it: may have missed it
    expect(reach.behind({ ...read('130'), nodes: '100' })).toBe(false);
    reach.reached('pods', '110'); // never backwards
    expect(reach.behind(read('120'))).toBe(true);
    expect(reach.behind({ ...read('130'), pdbs: 'x' })).toBe(true); // not a version: nobody can tell, told
    reach.clear();
    expect(reach.behind(read('1'))).toBe(false);
  });

  test('resourceVersions compare as numbers; anything else cannot be compared', () => {
    expect([versionBefore('9', '10'), versionBefore('10', '9'), versionBefore('10', '10'), versionBefore('', '1'), versionBefore('a', '1')]).toEqual([true, false, false, undefined, undefined]);
  });

  test('what advances the reach: any add, delete or spec change, a pod leaving or finishing, any PDB update; not a node heartbeat nor a readiness flip', () => {
    expect(mayMatter('pods', 'ADDED', pod('x', { statusLast: true }))).toBe(true);
    expect(mayMatter('pods', 'MODIFIED', pod('x'))).toBe(true);
    expect(mayMatter('pods', 'MODIFIED', pod('x', { statusLast: true }))).toBe(false);
    expect(mayMatter('pods', 'MODIFIED', pod('x', { statusLast: true, phase: 'Succeeded' }))).toBe(true);
    expect(mayMatter('pods', 'MODIFIED', pod('x', { statusLast: true, deleting: true }))).toBe(true);
    expect(mayMatter('pdbs', 'MODIFIED', pdb('app', 1))).toBe(true);
    const heartbeat: V1Node = { metadata: { name: 'n1', labels: { pool: 'a' }, managedFields: managed(true) } };
    expect(mayMatter('nodes', 'MODIFIED', heartbeat)).toBe(false);
    expect(mayMatter('nodes', 'MODIFIED', { ...heartbeat, metadata: { ...heartbeat.metadata, managedFields: managed(false) } })).toBe(true);
    expect(mayMatter('nodes', 'DELETED', heartbeat)).toBe(true);
  });
});
