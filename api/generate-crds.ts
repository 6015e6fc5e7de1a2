// Writes crds/<group>_<plural>.yaml for every entry of CRDS, and crds/admission-policies.yaml with
// POLICIES (so `kubectl apply -f crds/` installs both); with --check writes nothing and fails when
// crds/ differs (CI and `npm run crds:check` catch a zod change without regenerated YAML).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { crdManifest, GROUP } from './crd.js';
import { CRDS, POLICIES } from './crds.js';

export const CRDS_DIR = 'crds';
export const HEADER = '# Generated from api/ by npm run crds. Do not edit.\n';
export const POLICIES_FILE = 'admission-policies.yaml';
/**
 * A kustomize base of crds/ for deploy/ (kustomize loads files outside its root only as a base).
 * Named `Kustomization`, one of kustomize's own file names, so `kubectl apply -f crds/` (which
 * reads only .yaml/.yml/.json) does not take it for a manifest.
 */
export const KUSTOMIZATION_FILE = 'Kustomization';

/** crds/Kustomization: every generated file as a resource. */
export function renderKustomization(files: Map<string, string> = renderCrds()): string {
  return HEADER + stringify({ apiVersion: 'kustomize.config.k8s.io/v1beta1', kind: 'Kustomization', resources: [...files.keys()] });
}

/** File name → YAML text of every CRD and of the admission policies, exactly as `npm run crds` writes them. */
export function renderCrds(): Map<string, string> {
  const files = new Map<string, string>();
  for (const def of CRDS) {
    // lineWidth 0: long CEL rules and messages stay on one line, so diffs stay readable.
    files.set(`${GROUP}_${def.plural}.yaml`, HEADER + stringify(crdManifest(def), { lineWidth: 0 }));
  }
  files.set(POLICIES_FILE, HEADER + POLICIES.map((p) => stringify(p, { lineWidth: 0 })).join('---\n'));
  return files;
}

/** Generated files whose content differs from dir, missing from it, or in it without a CRD. */
export function staleCrds(dir = CRDS_DIR): { stale: string[]; missing: string[]; extra: string[] } {
  const want = renderCrds();
  const have = new Set(existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.yaml')) : []);
  const stale: string[] = [];
  const missing: string[] = [];
  for (const [file, text] of want) {
    if (!have.has(file)) missing.push(file);
    else if (readFileSync(join(dir, file), 'utf8') !== text) stale.push(file);
  }
  const kustomization = join(dir, KUSTOMIZATION_FILE);
  if (!existsSync(kustomization)) missing.push(KUSTOMIZATION_FILE);
  else if (readFileSync(kustomization, 'utf8') !== renderKustomization(want)) stale.push(KUSTOMIZATION_FILE);
  return { stale, missing, extra: [...have].filter((f) => !want.has(f)) };
}

function main(args: string[]): number {
  if (args.includes('--check')) {
    const { stale, missing, extra } = staleCrds();
    const problems = [...stale.map((f) => `stale: ${f}`), ...missing.map((f) => `missing: ${f}`), ...extra.map((f) => `extra: ${f}`)];
    if (problems.length === 0) return 0;
    console.error(`${CRDS_DIR}/ is out of date with api/; run npm run crds\n  ${problems.join('\n  ')}`);
    return 1;
  }
  // A kind dropped from CRDS must not leave its old YAML behind.
  const { extra } = staleCrds();
  for (const f of extra) rmSync(join(CRDS_DIR, f));
  mkdirSync(CRDS_DIR, { recursive: true });
  const files = renderCrds();
  for (const [file, text] of files) writeFileSync(join(CRDS_DIR, file), text);
  writeFileSync(join(CRDS_DIR, KUSTOMIZATION_FILE), renderKustomization(files));
  console.log(`wrote ${[...files.keys(), KUSTOMIZATION_FILE].map((f) => join(CRDS_DIR, f)).join(', ')}${extra.length ? `; removed ${extra.join(', ')}` : ''}`);
  return 0;
}

if (import.meta.url === `file://${process.argv[1]}`) process.exitCode = main(process.argv.slice(2));
