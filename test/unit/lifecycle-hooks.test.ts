// Lifecycle hooks (Cluster API's pre-drain and pre-terminate, on the Node): which annotations hold a
// node at which stage and under which owner, and how status names them (the drain's message, the
// node cycle's message, the CLI's lines). The local stack sees them hold: test/integration/lifecycle-hooks.test.ts.
import { hookAnnotation, lifecycleHooks, ownersText, PRE_DRAIN_HOOK_PREFIX, PRE_TERMINATE_HOOK_PREFIX } from '../../api/lifecycle-hooks.js';
import { nodeFacts } from '../../activities/drain/snapshot.js';
import { preTerminateMessage } from '../../workflows/cycle/node.js';
import { drainMarkdown, drainMessage, emptyStatus } from '../../workflows/drain/status.js';
import { renderCycle } from '../../starter/cycle-cli.js';
import { nodeStatus } from '../../starter/bridge/cycle/status.js';
import type { CycleStatus } from '../../workflows/cycle/types.js';

describe('which annotations hold a node', () => {
  test('one owner per pre-drain.hook.slipway.dev/<owner> key, sorted, whatever the value ("false" and "" hold too)', () => {
    const a = { [hookAnnotation('pre-drain', 'db-operator')]: 'false', [hookAnnotation('pre-drain', 'backup')]: '', other: 'x' };
    expect(lifecycleHooks(a, 'pre-drain')).toEqual({ owners: ['backup', 'db-operator'], warnings: [] });
  });

  test('a stage reads only its own hooks: a pre-terminate hook does not hold the drain, nor a pre-drain hook the termination', () => {
    const a = { 'pre-drain.hook.slipway.dev/a': '', 'pre-terminate.hook.slipway.dev/b': '' };
    expect(lifecycleHooks(a, 'pre-drain').owners).toEqual(['a']);
    expect(lifecycleHooks(a, 'pre-terminate').owners).toEqual(['b']);
    expect(PRE_DRAIN_HOOK_PREFIX).toBe('pre-drain.hook.slipway.dev/');
    expect(PRE_TERMINATE_HOOK_PREFIX).toBe('pre-terminate.hook.slipway.dev/');
  });

  test("Cluster API's Machine keys copied onto the Node hold too, with a warning naming Slipway's key", () => {
    const h = lifecycleHooks({ 'pre-drain.delete.hook.machine.cluster.x-k8s.io/backup': '' }, 'pre-drain');
    expect(h.owners).toEqual(['backup']);
    expect(h.warnings).toEqual([
      "annotation pre-drain.delete.hook.machine.cluster.x-k8s.io/backup is Cluster API's Machine hook; on a Node Slipway reads pre-drain.hook.slipway.dev/backup, and holds the node for this one too",
    ]);
    expect(lifecycleHooks({ 'pre-terminate.delete.hook.machine.cluster.x-k8s.io/x': '' }, 'pre-drain').owners).toEqual([]);
  });

  test('the prefix without "/<owner>" (the owner put in the value) holds as that owner, or "(unnamed)", with a warning', () => {
    const h = lifecycleHooks({ 'pre-drain.hook.slipway.dev': ' backup ' }, 'pre-drain');
    expect(h.owners).toEqual(['backup']);
    expect(h.warnings[0]).toContain('names no owner after "/" (expected pre-drain.hook.slipway.dev/<owner>)');
    expect(lifecycleHooks({ 'pre-terminate.hook.slipway.dev': '' }, 'pre-terminate').owners).toEqual(['(unnamed)']);
  });

  test('other names are not hooks: another domain, a misspelt stage, a lock; no annotations at all', () => {
    const a = { 'pre-drain.hook.example.com/x': '', 'predrain.hook.slipway.dev/y': '', 'pre-drain.hooks.slipway.dev/z': '', 'l2.lock.slipway.dev/h': '' };
    expect(lifecycleHooks(a, 'pre-drain')).toEqual({ owners: [], warnings: [] });
    expect(lifecycleHooks(undefined, 'pre-terminate')).toEqual({ owners: [], warnings: [] });
  });

  test('one owner named by two keys (ours and Cluster API’s) counts once', () => {
    expect(lifecycleHooks({ 'pre-drain.hook.slipway.dev/b': '', 'pre-drain.delete.hook.machine.cluster.x-k8s.io/b': '' }, 'pre-drain').owners).toEqual(['b']);
  });

  test('the drain reads the pre-drain owners with the node; none: no field (the recorded histories keep their shape)', () => {
    const node = { metadata: { name: 'n1', annotations: { 'pre-drain.hook.slipway.dev/backup': '' } }, spec: {} };
    expect(nodeFacts('n1', node).preDrainHooks).toEqual(['backup']);
    expect('preDrainHooks' in nodeFacts('n1', { metadata: { name: 'n1' } })).toBe(false);
  });
});

describe('how status names them', () => {
  test('owners: three named, then "N more"', () => {
    expect(ownersText(['a', 'b', 'c'])).toBe('a, b, c');
    expect(ownersText(['a', 'b', 'c', 'd', 'e'])).toBe('a, b, c and 2 more');
  });

  test('a drain held in Pending names the owners in its message and its Web UI details; once it goes on, they are gone from the message', () => {
    const s = { ...emptyStatus('n1'), hooks: ['backup', 'db'] };
    expect(drainMessage(s)).toBe(
      'waiting for pre-drain hooks: backup, db (Node n1 has annotations pre-drain.hook.slipway.dev/<owner>; no pod is evicted until their owners remove them)',
    );
    expect(drainMarkdown(s)).toContain('**waiting for pre-drain hooks**: `backup`, `db`');
    expect(drainMessage({ ...s, phase: 'Drained' })).not.toContain('hooks');
  });

  test('a node held before its delete: the cycle message', () => {
    expect(preTerminateMessage('n1', ['backup'])).toBe(
      'waiting for pre-terminate hooks: backup (Node n1 has annotations pre-terminate.hook.slipway.dev/<owner>; it is neither deleted nor terminated until their owners remove them)',
    );
  });

  test("the CLI's status shows both waits: a one-line drain message whole, a held delete's message beside its phase", () => {
    const s = {
      phase: 'WaitingTermination', nodesCycled: 0, nodesTotal: 2,
      nodes: [
        { nodeName: 'n1', phase: 'DrainingPods', drainMessage: drainMessage({ ...emptyStatus('n1'), hooks: ['backup'] }) },
        { nodeName: 'n2', phase: 'DeletingNode', message: preTerminateMessage('n2', ['db']) },
      ],
    } as unknown as CycleStatus;
    const out = renderCycle(s);
    expect(out).toContain('      waiting for pre-drain hooks: backup (Node n1');
    expect(out).toContain('DeletingNode (waiting for pre-terminate hooks: db (Node n2');
  });

  test("the CycleNodeStatus object's status carries both: the held delete's message, the held drain's message", () => {
    const base = { nodeName: 'n1', providerID: 'kwok://n1', nodeGroup: 'g', startedAt: 't0', timeoutAt: 't1' };
    expect(nodeStatus({ ...base, phase: 'DeletingNode', message: preTerminateMessage('n1', ['db']) } as never).message).toMatch(/^waiting for pre-terminate hooks: db /);
    const drain = drainMessage({ ...emptyStatus('n1'), hooks: ['backup'] });
    expect(nodeStatus({ ...base, phase: 'DrainingPods', drainMessage: drain } as never).drainMessage).toMatch(/^waiting for pre-drain hooks: backup /);
  });
});
