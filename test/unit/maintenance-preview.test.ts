// The Idle preview of a node (activities/maintenance/preview-plan.ts), assembled from the drain's
// real classification (classifyPod in targets mode with the whole effective plan) and PDB facts.
import { classifyPod, type ClassifyContext, type PodFacts } from '../../activities/drain/classify.js';
import { nodePreview, podCapFor, PREVIEW_POD_CAP, PREVIEW_TOTAL_POD_CAP, type PdbFacts } from '../../activities/maintenance/preview-plan.js';
import { effectivePlan, entryString, type PlanEntry } from '../../api/drain-plan.js';
import type { DrainRule } from '../../api/drain-rule.js';
import { DRAIN_LABEL } from '../../api/drain-plan.js';

function pod(name: string, over: Partial<PodFacts> = {}): PodFacts {
  return {
    namespace: 'app',
    name,
    uid: `uid-${name}`,
    labels: { app: name },
    annotations: {},
    phase: 'Running',
    controller: { kind: 'ReplicaSet', name: `${name}-rs`, apiVersion: 'apps/v1' },
    hasEmptyDir: false,
    claims: [],
    priority: 0,
    toleratesUnschedulable: false,
    ...over,
  };
}

const rule = (name: string, matchLabels: Record<string, string>, order: number): DrainRule =>
  ({ name, spec: { pods: [{ selector: { matchLabels } }], drain: { behavior: 'Drain', order } } }) as unknown as DrainRule;

/** The plan of the test: D≤1000 db=postgres, D≤1000, D≤5000, then the 12 defaults. */
const PLAN: PlanEntry[] = effectivePlan([
  { podType: 'Default', podPriority: 1000, podSelector: { matchLabels: { db: 'postgres' } } },
  { podType: 'Default', podPriority: 1000 },
  { podType: 'Default', podPriority: 5000 },
]);

function preview(pods: PodFacts[], pdbs: PdbFacts[] = [], rules: DrainRule[] = [], errors: string[] = []) {
  const ctx: ClassifyContext = {
    nodeLabels: {},
    unreachable: false,
    nowMs: 0,
    daemonSetExists: () => true,
    namespaceLabels: () => ({}),
    rules,
    targets: PLAN,
  };
  return nodePreview({ node: 'n1', exists: true, plan: PLAN, verdicts: pods.map((p) => classifyPod(p, ctx)), pods, pdbs, errors });
}

const pdb = (name: string, matchLabels: Record<string, string> | null, disruptionsAllowed: number, namespace = 'app'): PdbFacts => ({
  namespace,
  name,
  selector: matchLabels ? { matchLabels } : null,
  disruptionsAllowed,
});

test('a Default pod falls in the first plan entry it matches; DrainRule orders are the waves; skipped and kept pods carry their reasons', () => {
  const p = preview(
    [
      pod('pg', { priority: 900, labels: { app: 'pg', db: 'postgres' } }),
      pod('web', { priority: 900 }),
      pod('api', { priority: 3000 }),
      pod('api-first', { priority: 3000, labels: { app: 'api-first', tier: 'front' } }),
      pod('big', { priority: 1_000_000 }),
      pod('keepme', { labels: { app: 'keepme', [DRAIN_LABEL]: 'skip' } }),
      pod('agent', { controller: { kind: 'DaemonSet', name: 'agent', apiVersion: 'apps/v1' } }),
    ],
    [],
    [rule('front-last', { tier: 'front' }, 5)],
  );
  const where = Object.fromEntries(p.pods.map((x) => [x.pod, [x.entry < 0 ? 'none' : entryString(PLAN[x.entry]!), x.wave, x.action, x.reason, !!x.kept]]));
  expect(where).toEqual({
    'app/pg': ['Default ≤ 1000 db=postgres', 0, 'Evict', 'default', false],
    'app/web': ['Default ≤ 1000', 0, 'Evict', 'default', false],
    'app/api': ['Default ≤ 5000', 0, 'Evict', 'default', false],
    'app/api-first': ['Default ≤ 5000', 5, 'Evict', 'DrainRule front-last', false],
    'app/big': ['Default ≤ 1000000000', 0, 'Evict', 'default', false],
    'app/keepme': ['Default ≤ 1000', 0, 'Skip', `label ${DRAIN_LABEL}=skip`, false],
    'app/agent': ['DaemonSet ≤ 1000000000', 0, 'Skip', 'DaemonSet pod without evacuator: left for node shutdown', true],
  });
  // Listed in plan order, then wave.
  expect(p.pods.map((x) => x.pod)).toEqual(['app/pg', 'app/keepme', 'app/web', 'app/api', 'app/api-first', 'app/big', 'app/agent']);
  expect(p).toMatchObject({ evict: 5, entries: 4, skipped: 1, kept: 1, waitCompleted: 0, blocked: 0, podsOmitted: 0 });
  expect(p.message).toBe('Planned: 5 pods in 4 entries, 1 skipped, 1 kept');
});

test('a PDB blocks a pod it selects only when it allows no disruption now; the message names the pod and the PDB', () => {
  const p = preview(
    [pod('db-0', { labels: { app: 'db' } }), pod('web', { labels: { app: 'web' } }), pod('cache', { labels: { app: 'cache' } }), pod('batch', { labels: { app: 'batch', [DRAIN_LABEL]: 'wait-completed' } })],
    [pdb('db', { app: 'db' }, 0), pdb('web', { app: 'web' }, 1), pdb('elsewhere', { app: 'cache' }, 0, 'other'), pdb('none', null, 0), pdb('batch', { app: 'batch' }, 0)],
  );
  expect(p.pods.filter((x) => x.blockedBy).map((x) => [x.pod, x.blockedBy])).toEqual([['app/db-0', ['db']]]);
  expect(p).toMatchObject({ evict: 3, entries: 1, waitCompleted: 1, blocked: 1 });
  expect(p.message).toBe('Planned: 3 pods in 1 entry, 1 waited for, 0 skipped, 0 kept; blocked now: app/db-0 (PDB db)');
});

test('the pods listed are capped with exact counts; blocked, skipped and kept pods are listed first', () => {
  const many = Array.from({ length: PREVIEW_POD_CAP + 10 }, (_, i) => pod(`p${String(i).padStart(3, '0')}`));
  const p = preview([...many, pod('zz-skip', { labels: { [DRAIN_LABEL]: 'skip' } }), pod('zz-db', { labels: { app: 'db' } })], [pdb('db', { app: 'db' }, 0)]);
  expect(p.pods).toHaveLength(PREVIEW_POD_CAP);
  expect(p.podsOmitted).toBe(12);
  expect(p).toMatchObject({ evict: PREVIEW_POD_CAP + 11, skipped: 1, blocked: 1 });
  expect(p.pods.map((x) => x.pod)).toEqual(expect.arrayContaining(['app/zz-skip', 'app/zz-db']));
});

test('a missing node and invalid rules show in the message', () => {
  expect(nodePreview({ node: 'gone', exists: false, plan: PLAN, verdicts: [], pods: [], pdbs: [], errors: [] }).message).toBe('Planned: node no longer exists');
  expect(preview([], [], [], ['DrainRule bad: spec.drain.order: expected a number']).message).toBe('Planned: no pod to evict, 0 skipped, 0 kept; held: DrainRule bad: spec.drain.order: expected a number');
});

test('more than three blocked pods: three are named, the rest counted', () => {
  const p = preview(['a', 'b', 'c', 'd', 'e'].map((n) => pod(n, { labels: { app: 'db' } })), [pdb('db', { app: 'db' }, 0)]);
  expect(p.message).toBe('Planned: 5 pods in 1 entry, 0 skipped, 0 kept; blocked now: app/a (PDB db), app/b (PDB db), app/c (PDB db), 2 more');
});

test('many nodes list fewer pods each, so the whole preview stays bounded', () => {
  expect(podCapFor(1)).toBe(PREVIEW_POD_CAP);
  expect(podCapFor(100) * 100).toBeLessThanOrEqual(PREVIEW_TOTAL_POD_CAP);
  expect(podCapFor(10_000)).toBe(5);
});
