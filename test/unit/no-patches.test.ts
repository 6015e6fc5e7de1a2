// Before 1.0 no deployment runs old workflow code (docs/design.md, "Upgrade policy"): a workflow
// change is made plainly and the recorded histories are re-recorded, so no `patched()` or
// `deprecatePatch()` may creep back into workflows/. Read as text, comments excepted.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** The calls of patched()/deprecatePatch() in `text`, comments removed, as `file:line`. */
export function patchCalls(file: string, text: string): string[] {
  const code = text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/\/\/.*$/gm, '');
  return code.split('\n').flatMap((line, i) => (/\b(patched|deprecatePatch)\s*\(/.test(line) ? [`${file}:${i + 1}`] : []));
}

describe('#26.3 patches retired before 1.0', () => {
  test('the scan finds a call and ignores one in a comment', () => {
    expect(patchCalls('x.ts', "// patched('old')\nif (patched('new')) go();\n/* deprecatePatch('y') */")).toEqual(['x.ts:2']);
  });
  test('no workflow calls patched() or deprecatePatch()', () => {
    const found = sources('workflows').flatMap((f) => patchCalls(f, readFileSync(f, 'utf8')));
    expect(found).toEqual([]);
  });
});
