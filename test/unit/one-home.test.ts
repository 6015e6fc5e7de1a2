// One home per name (NM-7.8, #26.4 and the design note): Temporal messages are defined only in
// workflows/messages.ts, and workflow IDs are built only in workflows/ids.ts. A second definition
// would let the bridge, the CLI and the workflows drift apart on a name.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const ROOT = join(import.meta.dirname, '../..');
const PRODUCT = ['api', 'activities', 'workflows', 'worker', 'starter'];

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const files = PRODUCT.flatMap((d) => sources(join(ROOT, d))).map((p) => ({ path: relative(ROOT, p), text: readFileSync(p, 'utf8') }));
const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');

test('the product sources are found (the checks below look at something)', () => {
  expect(files.map((f) => f.path)).toEqual(expect.arrayContaining(['workflows/messages.ts', 'workflows/ids.ts', 'starter/bridge/main.ts']));
});

test('NM-7.8 every signal, update and query is defined in workflows/messages.ts', () => {
  const elsewhere = files.filter((f) => f.path !== 'workflows/messages.ts' && /\bdefine(Signal|Update|Query)\s*[<(]/.test(code(f.text))).map((f) => f.path);
  expect(elsewhere).toEqual([]);
  expect(readFileSync(join(ROOT, 'workflows/messages.ts'), 'utf8')).toMatch(/defineUpdate/);
});

test('workflow IDs are built only in workflows/ids.ts (no hand-made nm/, nm-node/, cycle/ or drain/ prefixes)', () => {
  const literal = /[`'"](nm|nm-node|cycle|cnr|drain)\/(\$\{|[`'"])/;
  const elsewhere = files.filter((f) => f.path !== 'workflows/ids.ts' && literal.test(code(f.text))).map((f) => f.path);
  expect(elsewhere).toEqual([]);
});

// ---- #26.4: one home per name, wider --------------------------------------------------------------

/** Everything that is code of ours outside api/ (tests' own fixtures included: they build objects too). */
const OUTSIDE_API = ['kube', 'shared', 'workflows', 'activities', 'worker', 'starter', 'stack', 'bench', 'test/support'];
const everywhere = (dirs: string[]) => dirs.flatMap((d) => sources(join(ROOT, d))).map((p) => ({ path: relative(ROOT, p), text: readFileSync(p, 'utf8') }));
const outsideApi = everywhere(OUTSIDE_API);
const hits = (fs: Array<{ path: string; text: string }>, re: RegExp) => fs.flatMap((f) => code(f.text).split('\n').filter((l) => re.test(l)).map((l) => `${f.path}: ${l.trim().slice(0, 140)}`));

test('#26.4 the scan below reads the whole tree, fixtures included', () => {
  expect(outsideApi.map((f) => f.path)).toEqual(expect.arrayContaining(['kube/client.ts', 'stack/aws/node-sync.ts', 'bench/chaos/run.ts', 'test/support/bridge.ts', 'shared/failpoint.ts']));
});

test('#26.4 Slipway label, annotation and finalizer keys are defined only in api/ (no slipway.dev/<key> literal elsewhere)', () => {
  expect(hits(outsideApi, /['"`][^'"`]*\bslipway\.dev\//)).toEqual([]);
});

test('#26.4 the API group, version and apiVersion are written once (api/names.ts): no slipway.dev/v1alpha1, group or group/version by hand', () => {
  const all = [...outsideApi, ...everywhere(['api']).filter((f) => f.path !== 'api/names.ts')];
  expect(hits(all, /slipway\.dev\/v1alpha1|['"`]slipway\.dev['"`]|['"`]v1alpha1['"`]/)).toEqual([]);
  // An apiVersion assembled from a resource's group and version is the same constant written by hand.
  expect(hits(all, /\$\{\s*[\w.]*(group|GROUP)\s*\}\/\$\{\s*[\w.]*(version|VERSION)\s*\}`/)).toEqual([]);
});

test('#26.4 workflow IDs are built and parsed only in workflows/ids.ts, everywhere (shared, kube, stack, bench and fixtures too)', () => {
  const elsewhere = outsideApi.filter((f) => f.path !== 'workflows/ids.ts');
  expect(hits(elsewhere, /[`'"](nm|nm-node|cycle|cnr|drain|ng|lock)\/(\$\{|[`'"])|\/\^(nm|nm-node|cnr|drain|ng|lock)\\\//)).toEqual([]);
  // The SlipwayObject search attribute values are IDs too: the bridge writes them, the CLI queries them.
  expect(hits(elsewhere, /[`'"](NodeMaintenance|CycleNodeRequest|NodeGroup)\/\$\{/)).toEqual([]);
});

test('#26.4 one mergePatch (kube/patch.ts) and one canonical() (api/canonical.ts), tests included', () => {
  const all = everywhere(['api', ...OUTSIDE_API, 'test']).filter((f) => f.path !== 'test/unit/one-home.test.ts');
  expect(hits(all.filter((f) => f.path !== 'kube/patch.ts'), /setHeaderOptions\(\s*'Content-Type'|PatchStrategy\.(MergePatch|StrategicMergePatch|ServerSideApply)\b(?!\s*\))/)).toEqual([]);
  expect(hits(all.filter((f) => f.path !== 'api/canonical.ts'), /function canonical\b|\bconst canonical\s*=/)).toEqual([]);
});
