// docs/nm-coverage.md stays true: every test file it lists for a NodeMaintenance statement still
// names that statement, and every statement has at least one. Tests name statements as `NM-3.1` or,
// several at once, `NM-5.1/5.2/5.4`. The statements are described in docs/node-maintenance.md (the
// spec they come from is kept outside the repository). To rebuild the table's test column after tests move:
//   SLIPWAY_WRITE_NM_COVERAGE=1 node --experimental-vm-modules node_modules/jest/bin/jest.js test/unit/nm-coverage.test.ts
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const DOC = 'docs/nm-coverage.md';
const ROW = /^\| (NM-\d+\.\d+[a-z]?) \| (.*) \| (.*) \|$/;

/** Every statement a source text names: `NM-a.b`, and `NM-a.b/c.d/...` for several. */
function namedStatements(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/NM-(\d+\.\d+[a-z]?)((?:\/\d+\.\d+[a-z]?)*)/g)) {
    out.add(`NM-${m[1]}`);
    for (const extra of m[2]!.split('/').filter(Boolean)) out.add(`NM-${extra}`);
  }
  return out;
}

function testFiles(dir = 'test'): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'histories' ? [] : testFiles(p);
    return p.endsWith('.ts') ? [p] : [];
  });
}

const rows = readFileSync(DOC, 'utf8')
  .split('\n')
  .map((l) => ROW.exec(l))
  .filter((m): m is RegExpExecArray => m !== null)
  .map((m) => ({ id: m[1]!, files: [...m[3]!.matchAll(/`([^`]+)`/g)].map((f) => f[1]!) }));

test('namedStatements reads single and grouped names', () => {
  expect([...namedStatements("test('E5(a) NM-5.1/5.2, NM-1.10 and NM-2.9c')")].sort()).toEqual(['NM-1.10', 'NM-2.9c', 'NM-5.1', 'NM-5.2']);
  expect(namedStatements('NM-1.1 only').has('NM-1.10')).toBe(false);
});

test('the coverage table lists statements, each with at least one test file', () => {
  expect(rows.length).toBeGreaterThan(50);
  expect(rows.filter((r) => r.files.length === 0).map((r) => r.id)).toEqual([]);
});

test('every test file the table lists still names its statement', () => {
  const named = new Map(testFiles().map((f) => [f, namedStatements(readFileSync(f, 'utf8'))]));
  const stale = rows.flatMap((r) => r.files.filter((f) => !named.get(f)?.has(r.id)).map((f) => `${r.id}: ${f}`));
  expect(stale).toEqual([]);
});

if (process.env.SLIPWAY_WRITE_NM_COVERAGE === '1') {
  test('rewrite the table', () => {
    const named = testFiles().map((f) => [f, namedStatements(readFileSync(f, 'utf8'))] as const);
    const doc = readFileSync(DOC, 'utf8')
      .split('\n')
      .map((l) => {
        const m = ROW.exec(l);
        if (!m) return l;
        const files = named.filter(([, ids]) => ids.has(m[1]!)).map(([f]) => `\`${f}\``);
        return `| ${m[1]} | ${m[2]} | ${files.join(', ') || '**none**'} |`;
      });
    writeFileSync(DOC, doc.join('\n'));
  });
}
