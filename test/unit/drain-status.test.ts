import { truncate } from '../../shared/drain.js';
import { drainMarkdown, drainMessage, emptyStatus, groupBlocked, outcomeSummary, pdbNames, stayedSummary, waveStatus, type DrainStatus } from '../../workflows/drain/status.js';
import { planWave } from '../../workflows/drain/waves.js';
import type { PodVerdict } from '../../shared/drain.js';

const PDB_WEB =
  "cannot evict pod as it would violate the pod's disruption budget. The disruption budget web needs 3 healthy pods and has 3 currently";
const PDB_DB =
  "cannot evict pod as it would violate the pod's disruption budget. The disruption budget db-pdb needs 2 healthy pods and has 2 currently";

function v(key: string, over: Partial<PodVerdict> = {}): PodVerdict {
  const [namespace, name] = key.split('/') as [string, string];
  return { namespace, name, uid: `uid-${name}`, action: 'Evict', order: 0, podType: 'Default', reason: 'default', warnings: [], terminating: false, phase: 'Running', claims: [], ...over };
}

function draining(over: Partial<DrainStatus> = {}): DrainStatus {
  return { ...emptyStatus('node-1'), phase: 'Draining', startedAt: '2025-01-01T00:00:00Z', ...over };
}

describe('truncate', () => {
  test('up to three names are listed in full', () => {
    expect(truncate([])).toBe('');
    expect(truncate(['a'])).toBe('a');
    expect(truncate(['a', 'b', 'c'])).toBe('a, b, c');
  });

  test('more than three: the first three, then how many more', () => {
    expect(truncate(['a', 'b', 'c', 'd', 'e'])).toBe('a, b, c, ... (2 more)');
  });

  test('the limit can be raised', () => {
    expect(truncate(['a', 'b', 'c', 'd', 'e', 'f'], 5)).toBe('a, b, c, d, e, ... (1 more)');
  });
});

describe('pdbNames', () => {
  test("names the budget in the apiserver's PDB message", () => {
    expect(pdbNames("Cannot evict pod as it would violate the pod's disruption budget. The disruption budget web needs 3 healthy pods and has 3 currently")).toEqual(['web']);
  });

  test('finds nothing in a reason that is not a PDB refusal', () => {
    expect(pdbNames('failed to evict Pod: 500 internal error')).toEqual([]);
  });
});

describe('groupBlocked', () => {
  test('pods refused for the same reason are grouped; reasons and pods are sorted', () => {
    const blocked = new Map([
      ['app/web-2', PDB_WEB],
      ['db/pg-1', PDB_DB],
      ['app/web-0', PDB_WEB],
      ['db/pg-0', PDB_DB],
    ]);
    // The reasons differ first at the budget's name: "db-pdb" sorts before "web".
    expect(groupBlocked(blocked)).toEqual([
      { reason: PDB_DB, pdbs: ['db-pdb'], pods: ['db/pg-0', 'db/pg-1'] },
      { reason: PDB_WEB, pdbs: ['web'], pods: ['app/web-0', 'app/web-2'] },
    ]);
  });

  test('a reason without a PDB has no pdbs', () => {
    expect(groupBlocked(new Map([['a/x', 'failed to evict Pod: 500 boom']]))).toEqual([{ reason: 'failed to evict Pod: 500 boom', pdbs: [], pods: ['a/x'] }]);
  });
});

describe('waveStatus', () => {
  test('blocked pods of the wave are not listed as evicting', () => {
    const plan = planWave([v('app/web-0'), v('app/web-1'), v('app/old', { terminating: true }), v('app/done', { action: 'Delete' }), v('app/next', { order: 1 })]);
    const s = waveStatus(plan, new Map([['app/web-1', PDB_WEB]]));
    expect(s.wave).toEqual({
      order: 0,
      evicting: ['app/done', 'app/old', 'app/web-0'],
      blocked: [{ reason: PDB_WEB, pdbs: ['web'], pods: ['app/web-1'] }],
      waitingCompletion: [],
    });
    expect(s.later).toEqual([{ order: 1, pods: ['app/next'] }]);
  });

  test('a refusal for a pod that is not to be evicted now is not reported as blocking', () => {
    const plan = planWave([v('app/web-0'), v('app/next', { order: 1 })]);
    const s = waveStatus(plan, new Map([['app/next', PDB_WEB]]));
    expect(s.wave!.blocked).toEqual([]);
    expect(s.wave!.evicting).toEqual(['app/web-0']);
  });

  test('skipped pods keep their reason; a finished drain has no wave', () => {
    const s = waveStatus(planWave([v('kube-system/ds', { action: 'Skip', reason: 'DaemonSet-managed' })]), new Map());
    expect(s.wave).toBeUndefined();
    expect(s.skipped).toEqual([{ pod: 'kube-system/ds', reason: 'DaemonSet-managed' }]);
  });

  test('a pod skipped by the workflow (skipPod) is listed with the operator\'s reason, not its classify reason', () => {
    const plan = planWave([v('app/db'), v('app/web')], { skipped: new Set(['app/db']) });
    const s = waveStatus(plan, new Map(), new Map([['app/db', 'keep the primary']]));
    expect(s.skipped).toEqual([{ pod: 'app/db', reason: 'keep the primary' }]);
    expect(s.wave!.evicting).toEqual(['app/web']);
  });
});

describe('drainMessage', () => {
  test("follows Cluster API's shape: start line, leaving pods, blocked reasons, waiting, later pods", () => {
    const s = draining({
      wave: {
        order: 0,
        evicting: ['app/old'],
        blocked: groupBlocked(new Map([['app/web-0', PDB_WEB], ['app/web-1', PDB_WEB]])),
        waitingCompletion: ['batch/job-1'],
      },
      later: [{ order: 1, pods: ['app/a', 'app/b'] }, { order: 2, pods: ['app/c', 'app/d'] }],
    });
    expect(drainMessage(s).split('\n')).toEqual([
      'Drain not completed yet (started at 2025-01-01T00:00:00Z), wave order 0:',
      '* Pod app/old: deletionTimestamp set, but still not removed from the Node',
      `* Pods app/web-0, app/web-1: ${PDB_WEB}`,
      '* Pod batch/job-1: waiting for completion',
      'After above Pods have been removed from the Node, the following Pods will be evicted: app/a, app/b, app/c, ... (1 more)',
    ]);
  });

  test("a blocked line carries the PDB's own words", () => {
    const s = draining({ wave: { order: 3, evicting: [], blocked: groupBlocked(new Map([['app/web-0', PDB_WEB]])), waitingCompletion: [] } });
    const lines = drainMessage(s).split('\n');
    expect(lines[0]).toMatch(/^Drain not completed yet \(started at 2025-01-01T00:00:00Z\)/);
    expect(lines[1]).toContain('The disruption budget web needs 3 healthy pods and has 3 currently');
    expect(lines).toHaveLength(2);
  });

  test('at most five reasons are shown; the pods of the rest are counted as other issues', () => {
    const blocked = new Map<string, string>();
    for (let i = 0; i < 7; i++) blocked.set(`app/p${i}`, `reason ${i}`);
    blocked.set('app/p7', 'reason 6');
    const s = draining({ wave: { order: 0, evicting: [], blocked: groupBlocked(blocked), waitingCompletion: [] } });
    const lines = drainMessage(s).split('\n');
    expect(lines.filter((l) => /: reason \d$/.test(l))).toHaveLength(5);
    expect(lines).toContain('* Pod app/p4: reason 4');
    expect(lines.some((l) => l.includes('reason 5'))).toBe(false);
    expect(lines[lines.length - 1]).toBe('* 3 Pods with other issues');
  });

  test('a drained node reports how many pods were evicted', () => {
    expect(drainMessage({ ...emptyStatus('n'), phase: 'Drained', evicted: 12 })).toBe('Drain completed: 12 Pods evicted');
    expect(drainMessage({ ...emptyStatus('n'), phase: 'Drained', evicted: 1 })).toBe('Drain completed: 1 Pod evicted');
  });

  test('a drained node with forced deletions counts them by how', () => {
    const forced = [{ pod: 'a/x', action: 'ForceDelete' as const, by: 'signal' as const, at: 't', reason: 'r' }];
    expect(drainMessage({ ...emptyStatus('n'), phase: 'Drained', evicted: 2, forced })).toBe('Drain completed: 2 Pods evicted, 1 force-deleted');
  });

  test('#24.3 a drain that skipped one pod and force-deleted another says "1 force-deleted" and "1 Pod skipped", never "2 forced"', () => {
    const forced = [
      { pod: 'app/keep', action: 'Skip' as const, by: 'signal' as const, at: 't', reason: 'kept by hand' },
      { pod: 'app/stuck', action: 'ForceDelete' as const, by: 'signal' as const, at: 't', reason: 'disk gone' },
    ];
    const s: DrainStatus = { ...emptyStatus('n'), phase: 'Drained', evicted: 1, forced, skipped: [{ pod: 'app/keep', reason: 'kept by hand' }] };
    const first = drainMessage(s).split('\n')[0]!;
    expect(first).toBe('Drain completed: 1 Pod evicted, 1 force-deleted; 1 Pod skipped (1 kept by hand)');
    expect(first).not.toMatch(/forced/);
    // A pod deleted by the podEvictionTimeout policy is counted apart from a force-delete.
    const timeout = [...forced, { pod: 'app/db', action: 'DeleteAfterTimeout' as const, by: 'policy' as const, at: 't', reason: 'r' }];
    expect(outcomeSummary({ ...s, forced: timeout })).toBe('1 Pod evicted, 1 force-deleted, 1 deleted after podEvictionTimeout; 1 Pod skipped (1 kept by hand: app/keep)');
  });

  test('a drain that skipped pods says how many and by what, so a Skip rule for every pod is not a silent no-op', () => {
    const skipped = [
      { pod: 'a/x', reason: 'DrainRule keep-all' },
      { pod: 'a/y', reason: 'DrainRule keep-all' },
      { pod: 'a/z', reason: 'DrainRule keep-all' },
      { pod: 'kube-system/agent', reason: 'DaemonSet-managed' },
    ];
    expect(drainMessage({ ...emptyStatus('n'), phase: 'Drained', evicted: 0, skipped }).split('\n')[0]).toBe(
      'Drain completed: 0 Pods evicted; 4 Pods skipped (3 by DrainRule keep-all, 1 DaemonSet-managed)',
    );
  });

  test('#24.2 a drained node names what stayed on it and why, after the counts: skipped pods by reason, pods that kept returning', () => {
    const skipped = [
      { pod: 'app/keep-1', reason: 'DrainRule keep' },
      { pod: 'kube-system/agent', reason: 'DaemonSet-managed' },
    ];
    const returning = [{ pod: 'app/sticky-4', reason: 'returns after eviction: tolerates node.kubernetes.io/unschedulable (Pods of ReplicaSet app/sticky evicted 4 times in this drain); left on the node' }];
    expect(drainMessage({ ...emptyStatus('n'), phase: 'Drained', evicted: 6, skipped, returning }).split('\n')).toEqual([
      'Drain completed: 6 Pods evicted; 2 Pods skipped (1 DaemonSet-managed, 1 by DrainRule keep); 1 Pod left on the Node',
      '* Pod kube-system/agent: skipped (DaemonSet-managed), left on the node',
      '* Pod app/keep-1: skipped (DrainRule keep), left on the node',
      `* Pod app/sticky-4: ${returning[0]!.reason}`,
    ]);
  });

  test('#24.2 what stayed is bounded: a few pods named per reason, at most five reasons, the rest counted', () => {
    const skipped = Array.from({ length: 8 }, (_, i) => ({ pod: `app/p${i}`, reason: `reason ${i % 7}` }));
    skipped.push(...Array.from({ length: 5 }, (_, i) => ({ pod: `ds/a${i}`, reason: 'DaemonSet-managed' })));
    const lines = drainMessage({ ...emptyStatus('n'), phase: 'Drained', evicted: 0, skipped }).split('\n');
    expect(lines).toHaveLength(7);
    expect(lines[1]).toBe('* Pods ds/a0, ds/a1, ds/a2, ... (2 more): skipped (DaemonSet-managed), left on the node');
    expect(lines[6]).toBe('* 3 more Pods left on the node for other reasons');
    expect(stayedSummary({ skipped, returning: [] })).toBe('13 Pods skipped (5 DaemonSet-managed: ds/a0, ds/a1 and 3 more; 2 reason 0: app/p0, app/p7; 1 reason 1: app/p1; 5 for other reasons)');
  });

  test('pods that keep coming back are named, with the reason, when the drain ends and while it runs', () => {
    const returning = [{ pod: 'app/web-9', reason: 'returns after eviction: tolerates node.kubernetes.io/unschedulable (ReplicaSet app/web evicted 3 times in this drain); left on the node' }];
    expect(drainMessage({ ...emptyStatus('n'), phase: 'Drained', evicted: 4, returning })).toBe(
      `Drain completed: 4 Pods evicted; 1 Pod left on the Node\n* Pod app/web-9: ${returning[0]!.reason}`,
    );
    const plan = planWave([v('a/x', { terminating: true })]);
    const st = draining({ ...waveStatus(plan, new Map()), returning });
    expect(drainMessage(st).split('\n')).toContain(`* Pod app/web-9: ${returning[0]!.reason}`);
  });

  test('a drain held by an invalid DrainRule names the rule and the field, whatever else the status holds', () => {
    const heldBy = ['DrainRule bad is invalid: spec.drain.order: Too big: expected int to be <=2147483647'];
    const msg = drainMessage(draining({ heldBy }));
    expect(msg.split('\n')[0]).toBe('Drain held: an invalid DrainRule could decide about Pods on Node node-1; nothing is evicted until it is fixed or deleted:');
    expect(msg).toContain(`* ${heldBy[0]}`);
    expect(drainMarkdown(draining({ heldBy }))).toContain('**held**');
  });

  test('a node that does not exist, or is deleted mid-drain, says so', () => {
    expect(drainMessage({ ...emptyStatus('n'), phase: 'Drained', nodeGone: 'before' })).toBe('Node n not found; nothing to drain');
    expect(drainMessage({ ...emptyStatus('n'), phase: 'Drained', evicted: 2, nodeGone: 'during' })).toBe('Drain completed: 2 Pods evicted (Node n was deleted during the drain)');
  });

  test('while waiting for volumes the volume message is shown', () => {
    expect(drainMessage({ ...emptyStatus('n'), phase: 'WaitingForVolumeDetach', volumes: { message: 'Waiting for X', timedOut: false } })).toBe('Waiting for X');
  });
});

describe('drainMarkdown', () => {
  test('names the blocking PDB in backticks and the blocked pods', () => {
    const s = draining({
      evicted: 4,
      completedWaves: [-1],
      wave: { order: 0, evicting: [], blocked: groupBlocked(new Map([['app/web-0', PDB_WEB], ['app/web-1', PDB_WEB]])), waitingCompletion: [] },
    });
    const md = drainMarkdown(s);
    expect(md.split('\n')[0]).toBe('**Drain node-1**: Draining, wave order 0; 4 evicted');
    expect(md).toContain('Waves done: -1');
    expect(md).toContain('- **blocked** (2) by PDB `web`: app/web-0, app/web-1');
    expect(md).toContain(`_${PDB_WEB}_`);
  });

  test('several PDBs in one reason are all named', () => {
    const reason = 'The disruption budget a needs 1 healthy pods and has 1 currently; The disruption budget b needs 2 healthy pods and has 2 currently';
    const s = draining({ wave: { order: 0, evicting: [], blocked: groupBlocked(new Map([['x/p', reason]])), waitingCompletion: [] } });
    expect(drainMarkdown(s)).toContain('by PDB `a`, `b`: x/p');
  });

  test('a refusal without a PDB names no PDB', () => {
    const s = draining({ wave: { order: 0, evicting: [], blocked: groupBlocked(new Map([['x/p', 'failed to evict Pod: 500 boom']])), waitingCompletion: [] } });
    const md = drainMarkdown(s);
    expect(md).toContain('- **blocked** (1): x/p');
    expect(md).not.toContain('PDB');
  });
});

describe('targets mode (NodeMaintenance drains)', () => {
  const targets = { lanes: [{ podType: 'Default' as const, podPriority: 1000 }, { podType: 'Default' as const, podPriority: 2000, podSelector: { matchLabels: { app: 'pg' } } }], final: false, seq: 3 };
  const counts = { podsPendingEvictionRequest: 4, activeEvictionRequests: 2, podsBlocked: 1, podsKept: 1 };

  test('finished at non-final targets: the message names the targets reached and that it waits for the next', () => {
    expect(drainMessage(draining({ targets, finished: true }))).toBe('Drain targets reached (Default ≤ 1000, Default ≤ 2000 app=pg); waiting for the next targets');
  });

  test('not finished: the usual wave message; the markdown shows the targets and the counts', () => {
    const s = draining({ targets, finished: false, counts, wave: { order: 0, evicting: ['app/web'], blocked: [], waitingCompletion: [] } });
    expect(drainMessage(s)).toMatch(/^Drain not completed yet/);
    const md = drainMarkdown(s);
    expect(md).toContain('- targets #3: Default ≤ 1000, Default ≤ 2000 app=pg');
    expect(md).toContain('- pods: 4 pending, 2 leaving (1 blocked), 1 kept');
  });

  test('a whole-node drain shows no targets line', () => {
    expect(drainMarkdown(draining())).not.toContain('targets');
  });
});

describe('a CLI drain waiting for a NodeDisruptionBudget slot (issue 15)', () => {
  const w = 'waiting for NodeDisruptionBudget nb: 2 of 2 nodes disrupted';
  test('Pending: the message is the refusal, and the Web UI details say nothing is cordoned yet', () => {
    const s: DrainStatus = { ...emptyStatus('n'), budgetWait: w };
    expect(drainMessage(s)).toBe(w);
    expect(drainMarkdown(s)).toContain(`**${w}** (nothing cordoned yet; asked again every 5 s)`);
  });
  test('past Pending (granted) the refusal no longer shows', () => {
    expect(drainMessage({ ...emptyStatus('n'), phase: 'Cordoning', budgetWait: w })).toBe('Cordoning');
  });
});
