// Which edits of a running request's spec the cycle can take. Only cycleSettings.concurrency: the
// nodes, groups, method and checks were decided when the cycle started, and changing them midway
// would leave a cycle that is neither the old request nor the new one. The CRD refuses other edits
// at admission (a CEL transition rule); this is the same rule, for the workflow to enforce itself.
import type { CycleNodeRequestSpecInput } from '../../api/cycle-node-request.js';
import { canonical } from '../../api/canonical.js';

/** Dotted paths of the fields that differ, concurrency excluded. Key order does not matter. */
export function immutableChanges(before: CycleNodeRequestSpecInput, after: CycleNodeRequestSpecInput): string[] {
  const strip = (s: CycleNodeRequestSpecInput) => {
    const { cycleSettings, ...rest } = s;
    const { concurrency: _ignored, ...settings } = cycleSettings ?? {};
    return { ...rest, cycleSettings: settings };
  };
  return diff(strip(before), strip(after), '');
}

function diff(a: unknown, b: unknown, path: string): string[] {
  if (isObject(a) && isObject(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort();
    return keys.flatMap((k) => diff(a[k], b[k], path ? `${path}.${k}` : k));
  }
  return canonical(a) === canonical(b) ? [] : [path];
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
