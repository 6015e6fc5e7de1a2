// Canonical JSON: object keys sorted, keys whose value is undefined dropped (as JSON.stringify drops
// them), so two values that serialize to the same JSON document up to key order give the same
// string. Used wherever values are compared or used as keys: a DrainRule's duplicate entries, the
// drain plan's selector keys, a request's spec edits, the bridge's "did the status change". Here in
// api/ (which imports nothing, and no zod in this file) so that every layer, workflow code included,
// can use the one definition.

/** The canonical JSON of `v`; 'undefined' for undefined itself (distinct from every JSON text). */
export function canonical(v: unknown): string {
  if (v === undefined) return 'undefined';
  return JSON.stringify(v, (_k, val: unknown) => {
    if (val && typeof val === 'object' && !Array.isArray(val)) {
      return Object.fromEntries(
        Object.entries(val as Record<string, unknown>)
          .filter(([, x]) => x !== undefined)
          .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
      );
    }
    return val;
  });
}
