// No workflow function over about 60 lines (issue 10): a longer one is a state machine that wants
// named steps. No workflow file over about 400 lines (issue 26): a longer one is two files (a class
// that grew its phase handlers wants them in files of their own, named after the phase group). Every function, method and arrow function in workflows/ is measured from its parsed
// span (swc, which jest already uses), so comments and strings cannot fool it.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import swc from '@swc/core';

const MAX_LINES = 60;
const MAX_FILE_LINES = 400;
const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression', 'ClassMethod', 'PrivateMethod', 'Constructor']);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** `lines file:line name` of every function in `src`. */
export function functionLengths(file: string, text: string): Array<{ lines: number; where: string }> {
  // A leading `;` pins the module's span to offset 0 (swc offsets are global across parses).
  const src = `;\n${text}`;
  const ast = swc.parseSync(src, { syntax: 'typescript', target: 'es2022' });
  const base = ast.span.start;
  const bytes = Buffer.from(src, 'utf8');
  const lineAt = (offset: number) => bytes.subarray(0, offset - base).toString('utf8').split('\n').length - 1;
  const out: Array<{ lines: number; where: string }> = [];
  const visit = (n: unknown, name: string): void => {
    if (!n || typeof n !== 'object') return;
    if (Array.isArray(n)) return n.forEach((x) => visit(x, name));
    const node = n as Record<string, any>;
    let nm = name;
    if (node.type === 'VariableDeclarator' && node.id?.value) nm = node.id.value;
    if (node.type === 'FunctionDeclaration' && node.identifier) nm = node.identifier.value;
    if ((node.type === 'ClassMethod' || node.type === 'PrivateMethod' || node.type === 'KeyValueProperty') && node.key) nm = node.key.value ?? node.key.id?.value ?? nm;
    if (FUNCTIONS.has(node.type) && node.span) {
      const start = lineAt(node.span.start);
      out.push({ lines: lineAt(node.span.end) - start + 1, where: `${file}:${start} ${nm}` });
    }
    for (const [k, v] of Object.entries(node)) if (k !== 'span') visit(v, nm);
  };
  visit(ast.body, '(anonymous)');
  return out;
}

test(`no function in workflows/ is over ${MAX_LINES} lines`, () => {
  const all = sources('workflows').flatMap((f) => functionLengths(f, readFileSync(f, 'utf8')));
  expect(all.length).toBeGreaterThan(100);
  expect(all.filter((f) => f.lines > MAX_LINES).map((f) => `${f.where}: ${f.lines} lines`)).toEqual([]);
});

test(`#26.2 no file in workflows/ is over ${MAX_FILE_LINES} lines`, () => {
  const files = sources('workflows');
  expect(files.length).toBeGreaterThan(20);
  const lines = (f: string) => readFileSync(f, 'utf8').split('\n').length - 1;
  const over = files.filter((f) => lines(f) > MAX_FILE_LINES).map((f) => `${f}: ${lines(f)} lines`);
  expect(over).toEqual([]);
});

test('the measure counts a function from its first to its last line, wherever it sits', () => {
  const body = Array.from({ length: 61 }, (_, i) => `  const a${i} = ${i};`).join('\n');
  const src = `// header\nimport x from 'y';\n\nexport function long() {\n${body}\n}\nconst short = () => 1;\n`;
  expect(functionLengths('f.ts', src)).toEqual([
    { lines: 63, where: 'f.ts:4 long' },
    { lines: 1, where: 'f.ts:67 short' },
  ]);
});
