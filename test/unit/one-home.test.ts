// One home per name (NM-7.8 and the design note): Temporal messages are defined only in
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
