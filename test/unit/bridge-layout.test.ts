// The bridge's layout (docs/design.md, "The CRD bridge"): each kind in its own folder with its
// reconciler and its term, the kinds independent of each other, and at the root only what every
// kind uses. Read from the imports of starter/bridge/**.ts, so a file moved or added in the wrong
// place is named.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';

const BRIDGE = 'starter/bridge';
const KINDS = ['cycle', 'maintenance', 'budget', 'node-group'];
/** The process and the composition of the kinds: they import every kind. */
const COMPOSERS = ['bridge.ts', 'main.ts'];

interface Import {
  /** Path below starter/bridge/ of the imported file (.ts). */
  to: string;
  typeOnly: boolean;
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    if (statSync(p).isDirectory()) return tsFiles(p);
    return f.endsWith('.ts') ? [p] : [];
  });
}

/** The imports of a file (below starter/bridge/) that stay inside starter/bridge/. */
function bridgeImports(file: string): Import[] {
  const src = readFileSync(join(BRIDGE, file), 'utf8');
  const out: Import[] = [];
  for (const m of src.matchAll(/^(import|export)(\s+type)?[^;]*?from\s+'(\.[^']+)'/gms)) {
    const to = relative(BRIDGE, normalize(join(BRIDGE, dirname(file), m[3]!))).replace(/\.js$/, '.ts');
    if (!to.startsWith('..')) out.push({ to, typeOnly: Boolean(m[2]) });
  }
  return out;
}

const kindOf = (file: string) => (file.includes('/') ? file.split('/')[0]! : undefined);

describe('#26.4 starter/bridge/ in per-kind folders, one kit at the root', () => {
  const files = existsSync(BRIDGE) ? tsFiles(BRIDGE).map((f) => relative(BRIDGE, f)) : [];
  const imports = new Map(files.map((f) => [f, bridgeImports(f)]));
  const rootFiles = files.filter((f) => !f.includes('/'));

  it('#26.4 each kind has its folder with its reconciler and its term, and imports no other kind', () => {
    for (const kind of KINDS) {
      expect([kind, existsSync(join(BRIDGE, kind, 'reconciler.ts')), existsSync(join(BRIDGE, kind, 'term.ts'))]).toEqual([kind, true, true]);
    }
    // Nothing kind-specific is left at the root under a kind's prefix.
    expect(rootFiles.filter((f) => KINDS.some((k) => f.startsWith(`${k}-`) || f === `${k}.ts`))).toEqual([]);
    const crossing = files.flatMap((f) => (imports.get(f) ?? []).filter((i) => kindOf(f) && kindOf(i.to) && kindOf(i.to) !== kindOf(f)).map((i) => `${f} → ${i.to}`));
    expect(crossing).toEqual([]);
  });

  it('#26.4 every root file but the composers serves two kinds or more, and imports no kind code', () => {
    // The root files each kind reaches, directly or through other root files.
    const reached = new Map<string, Set<string>>(rootFiles.map((f) => [f, new Set<string>()]));
    for (const kind of KINDS) {
      const queue = files.filter((f) => kindOf(f) === kind).flatMap((f) => imports.get(f)!.map((i) => i.to));
      const seen = new Set<string>();
      while (queue.length) {
        const f = queue.pop()!;
        if (kindOf(f) || seen.has(f) || !reached.has(f)) continue;
        seen.add(f);
        reached.get(f)!.add(kind);
        queue.push(...imports.get(f)!.map((i) => i.to));
      }
    }
    const composed = new Set(COMPOSERS.flatMap((c) => (imports.get(c) ?? []).map((i) => i.to)));
    const lonely = rootFiles.filter((f) => !COMPOSERS.includes(f) && reached.get(f)!.size < 2 && !composed.has(f)).map((f) => `${f}: ${[...reached.get(f)!].join(', ') || 'no kind'}`);
    expect(lonely).toEqual([]);
    // Below the composers the root is the kinds' kit: a kind's types may be named (metrics' view), its code not.
    const upward = rootFiles
      .filter((f) => !COMPOSERS.includes(f))
      .flatMap((f) => imports.get(f)!.filter((i) => kindOf(i.to) && !i.typeOnly).map((i) => `${f} → ${i.to}`));
    expect(upward).toEqual([]);
  });
});
