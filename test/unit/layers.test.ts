// Imports point down. Every import of every .ts file in the layers below (not test/) is read and
// checked against this table; a failure names the file and the import. docs/design.md states the
// same rules ("Layers").
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';

type Layer = 'api' | 'kube' | 'shared' | 'workflows' | 'activities' | 'worker' | 'starter' | 'stack' | 'bench';
const LAYERS: Layer[] = ['api', 'kube', 'shared', 'workflows', 'activities', 'worker', 'starter', 'stack', 'bench'];

/** What each layer may import of ours (besides itself). */
const MAY_IMPORT: Record<Layer, Layer[]> = {
  api: [],
  kube: [], // generic Kubernetes machinery: of ours only KUBE_SHARED
  shared: ['api'],
  workflows: ['api', 'shared'], // and `import type` from activities (TYPE_ONLY)
  activities: ['api', 'kube', 'shared'], // and workflows/ids.ts (ACTIVITIES_WORKFLOWS)
  worker: ['api', 'kube', 'shared', 'workflows', 'activities'],
  starter: ['api', 'kube', 'shared', 'workflows'], // and the activities modules in STARTER_ACTIVITIES
  stack: ['api', 'kube', 'shared', 'workflows', 'activities'],
  bench: ['api', 'kube', 'shared', 'workflows', 'activities', 'worker', 'starter', 'stack'], // a harness: anything
};

/**
 * kube/ knows no Slipway kind, label or workflow: of ours it uses only the logger (shared/log.ts
 * imports nothing of ours), so a controller or a watch logs like the rest of the process.
 */
const KUBE_SHARED = ['shared/log.ts'];

/** Workflow IDs have one home (workflows/ids.ts, pure, no imports); an activity reads its caller's ID with it. */
const ACTIVITIES_WORKFLOWS = ['workflows/ids.ts'];

/**
 * Edges allowed only as `import type` (erased at compile): the workflows' view of the activities'
 * signatures and results, `proxyActivities<Activities>()` as in the Temporal samples. No activity
 * code enters the workflow bundle.
 */
const TYPE_ONLY: Partial<Record<Layer, Layer[]>> = { workflows: ['activities'] };

/**
 * The clients talk to Kubernetes with kube/ and with the activities' own pieces, so there is one of
 * each: the Event writer (events.ts: one Event format), the kwok Node shape
 * the main job creates its node group with (providers/kwok-node.ts), and the NodeDisruptionBudget
 * ledger (budget/index.ts: the bridge keeps a budget's status current with the holders' own
 * read-decide-write, so there is one writer's logic). Nothing else of activities/.
 */
const STARTER_ACTIVITIES = ['events.ts', 'providers/kwok-node.ts', 'budget/index.ts'].map((f) => `activities/${f}`);

/** Exactly these files may make these edges against the table, and why. */
const EXCEPTIONS: Array<{ from: string; to: string; why: string }> = [
  { from: 'starter/main.ts', to: 'worker/worker.ts', why: '`npm start`, the main job: hosts a worker in its own process' },
  { from: 'starter/demo-maintenance.ts', to: 'worker/worker.ts', why: '`npm run demo:maintenance`: hosts a worker in its own process' },
  { from: 'starter/demo-rollout.ts', to: 'worker/worker.ts', why: '`npm run demo:rollout`: hosts a worker in its own process' },
];

/** Node-only modules of shared/ that workflow code must never import (the bundle would refuse them anyway). */
const NOT_FOR_WORKFLOWS = ['shared/temporal.ts', 'shared/metrics.ts', 'shared/failpoint.ts', 'shared/log.ts'];

const ROOT = join(dirname(new URL(import.meta.url).pathname), '..', '..');

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

export interface Import {
  spec: string;
  typeOnly: boolean;
}

/** Every static (`import`/`export ... from`, side-effect `import '...'`) and dynamic (`import('...')`) import. */
export function importsOf(src: string): Import[] {
  const out: Import[] = [];
  for (const m of src.matchAll(/^\s*(import|export)\s+(type\s+)?(?:[^;'"]*?\bfrom\s+)?['"]([^'"]+)['"]/gm)) {
    out.push({ spec: m[3]!, typeOnly: m[2] !== undefined });
  }
  for (const m of src.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push({ spec: m[1]!, typeOnly: false });
  return out;
}

/** The file an import names, relative to the repository root, as `.ts` (undefined: a package). */
function target(file: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  return normalize(join(dirname(file), spec)).split(sep).join('/').replace(/\.js$/, '.ts');
}

const layerOf = (path: string): string => path.split('/')[0]!;

/** What is wrong with one import of `file` ('' when it is allowed). */
export function violation(file: string, imp: Import): string {
  const to = target(file, imp.spec);
  if (to === undefined) return '';
  const from = layerOf(file) as Layer;
  const toLayer = layerOf(to);
  if (toLayer === from) return '';
  if (EXCEPTIONS.some((e) => e.from === file && e.to === to)) return '';
  const bad = `${file} imports '${imp.spec}' (${to})`;
  if (!(LAYERS as string[]).includes(toLayer)) return `${bad}: ${toLayer}/ is not a layer code may import`;
  if (from === 'workflows' && NOT_FOR_WORKFLOWS.includes(to)) return `${bad}: Node-only, not for workflow code`;
  if (MAY_IMPORT[from].includes(toLayer as Layer)) return '';
  if (TYPE_ONLY[from]?.includes(toLayer as Layer)) return imp.typeOnly ? '' : `${bad}: ${from} may import ${toLayer} only as \`import type\``;
  if (from === 'starter' && STARTER_ACTIVITIES.includes(to)) return '';
  if (from === 'kube' && KUBE_SHARED.includes(to)) return '';
  if (from === 'activities' && ACTIVITIES_WORKFLOWS.includes(to)) return '';
  return `${bad}: ${from} may not import ${toLayer}`;
}

describe('layers: imports point down', () => {
  const files = LAYERS.flatMap((l) => sources(l)).map((f) => relative(ROOT, join(ROOT, f)).split(sep).join('/'));

  test('every layer has sources (the scan reads the tree)', () => {
    for (const l of LAYERS) expect(files.some((f) => layerOf(f) === l)).toBe(true);
    expect(files.length).toBeGreaterThan(100);
  });

  test('no import of api, shared, workflows, activities, worker, starter, stack or bench goes against the table', () => {
    const bad = files.flatMap((f) => importsOf(readFileSync(join(ROOT, f), 'utf8')).map((imp) => violation(f, imp))).filter(Boolean);
    expect(bad).toEqual([]);
  });

  test('every exception is still used (a stale one would hide nothing, but misleads)', () => {
    for (const e of EXCEPTIONS) {
      const used = importsOf(readFileSync(join(ROOT, e.from), 'utf8')).some((imp) => target(e.from, imp.spec) === e.to);
      expect(`${e.from} → ${e.to}: ${used ? 'used' : 'stale'}`).toBe(`${e.from} → ${e.to}: used`);
    }
  });

  test('the reader finds multi-line, type-only, re-export, side-effect and dynamic imports, and the rules refuse upward edges', () => {
    const src = [
      "import {\n  a,\n  b,\n} from '../../workflows/drain/status.js';",
      "import type { X } from '../activities/index.js';",
      "export { y } from './y.js';",
      "import './side.js';",
      "const m = await import('../worker/main.js');",
      "const s = 'import x from \"nowhere\"'; // not an import",
    ].join('\n');
    expect(importsOf(src)).toEqual([
      { spec: '../../workflows/drain/status.js', typeOnly: false },
      { spec: '../activities/index.js', typeOnly: true },
      { spec: './y.js', typeOnly: false },
      { spec: './side.js', typeOnly: false },
      { spec: '../worker/main.js', typeOnly: false },
    ]);
    expect(violation('activities/drain/volumes.ts', { spec: '../../workflows/drain/status.js', typeOnly: false })).toMatch(/activities may not import workflows/);
    expect(violation('workflows/proxies.ts', { spec: '../activities/index.js', typeOnly: true })).toBe('');
    expect(violation('workflows/proxies.ts', { spec: '../activities/index.js', typeOnly: false })).toMatch(/only as `import type`/);
    expect(violation('workflows/ids.ts', { spec: '../shared/temporal.js', typeOnly: false })).toMatch(/Node-only/);
    expect(violation('starter/cli/main.ts', { spec: '../../worker/config.js', typeOnly: false })).toMatch(/starter may not import worker/);
    expect(violation('starter/cli/main.ts', { spec: '../../kube/client.js', typeOnly: false })).toBe('');
    expect(violation('starter/cli/main.ts', { spec: '../../activities/drain/evict.js', typeOnly: false })).toMatch(/starter may not import activities/);
    expect(violation('activities/providers/kwok.ts', { spec: '../../stack/kwok/nodes.js', typeOnly: false })).toMatch(/activities may not import stack/);
    expect(violation('stack/kwok/nodes.ts', { spec: '../../starter/main.js', typeOnly: false })).toMatch(/stack may not import starter/);
    expect(violation('api/crd.ts', { spec: '../shared/drain.js', typeOnly: false })).toMatch(/api may not import shared/);
    expect(violation('worker/main.ts', { spec: '../test/support/cycle.js', typeOnly: false })).toMatch(/test\/ is not a layer/);
  });

  test('#26.4 kube/ is the bottom Kubernetes layer: generic code moved there, it imports none of our domain, workflows never import it', () => {
    for (const f of ['kube/client.ts', 'kube/listwatch.ts', 'kube/object-cache.ts', 'kube/watch.ts', 'kube/patch.ts', 'kube/controller/controller.ts', 'kube/controller/leader.ts']) {
      expect([f, existsSync(join(ROOT, f))]).toEqual([f, true]);
    }
    for (const f of ['activities/kube.ts', 'activities/listwatch.ts', 'activities/object-cache.ts', 'activities/watch.ts', 'starter/controller']) {
      expect([f, existsSync(join(ROOT, f))]).toEqual([f, false]);
    }
    for (const to of ['api/crd.js', 'shared/drain.js', 'workflows/ids.js', 'activities/events.js', 'starter/bridge/names.js', 'worker/worker.js']) {
      expect(violation('kube/controller/controller.ts', { spec: `../../${to}`, typeOnly: false })).toMatch(/kube may not import/);
    }
    expect(violation('kube/controller/controller.ts', { spec: '../../shared/log.js', typeOnly: false })).toBe('');
    for (const from of ['activities/drain/node.ts', 'starter/bridge/bridge.ts', 'stack/kwok/nodes.ts', 'bench/chaos/run.ts', 'worker/config/x.ts']) {
      expect(violation(from, { spec: '../../kube/patch.js', typeOnly: false })).toBe('');
    }
    expect(violation('workflows/drain/drain.ts', { spec: '../../kube/patch.js', typeOnly: false })).toMatch(/workflows may not import kube/);
    expect(violation('shared/drain.ts', { spec: '../kube/patch.js', typeOnly: false })).toMatch(/shared may not import kube/);
  });

  test('#26.4 no workflow value-imports a module that imports zod (directly or through its own value imports): zod stays out of the workflow bundle', () => {
    const bad = files
      .filter((f) => layerOf(f) === 'workflows')
      .flatMap((f) =>
        importsOf(readFileSync(join(ROOT, f), 'utf8'))
          .filter((imp) => !imp.typeOnly)
          .map((imp) => ({ imp, to: target(f, imp.spec) }))
          .filter((e): e is { imp: Import; to: string } => e.to !== undefined && layerOf(e.to) !== 'workflows')
          .map(({ imp, to }) => {
            const via = zodVia(to);
            return via ? `${f} imports '${imp.spec}': zod through ${via.join(' → ')}` : '';
          }),
      )
      .filter(Boolean);
    expect(bad).toEqual([]);
    // The check itself: a module that imports zod is found through a value import, not through `import type`.
    expect(zodVia('api/crd.ts')).toEqual(['api/crd.ts']);
    expect(zodVia('workflows/ids.ts')).toBeUndefined();
  });
});

const zodMemo = new Map<string, string[] | undefined>();
/** The chain of value imports from `file` to a module that imports zod, or undefined when there is none. */
function zodVia(file: string, seen = new Set<string>()): string[] | undefined {
  if (zodMemo.has(file)) return zodMemo.get(file);
  if (seen.has(file) || !existsSync(join(ROOT, file))) return undefined;
  seen.add(file);
  let chain: string[] | undefined;
  for (const imp of importsOf(readFileSync(join(ROOT, file), 'utf8'))) {
    if (imp.typeOnly) continue;
    if (imp.spec === 'zod' || imp.spec.startsWith('zod/')) {
      chain = [file];
      break;
    }
    const to = target(file, imp.spec);
    const via = to === undefined ? undefined : zodVia(to, seen);
    if (via) {
      chain = [file, ...via];
      break;
    }
  }
  zodMemo.set(file, chain);
  return chain;
}
