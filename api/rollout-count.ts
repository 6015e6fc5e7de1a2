// spec.rollout.maxUnavailable resolved to a number of nodes: zod-free, so the workflows may import
// it (test/unit/layers.test.ts keeps zod out of their bundle); api/rollout.ts re-exports it.

/**
 * How many of `selected` nodes may be in maintenance at once. A percentage rounds down, and never
 * below 1 (OpenShift's maxUnavailable): 25% of 3 nodes is 1, so a percentage cannot stall a rollout.
 */
export function maxUnavailableOf(v: number | string, selected: number): number {
  if (typeof v === 'number') return v;
  if (!v.endsWith('%')) return Number(v);
  return Math.max(1, Math.floor((selected * Number(v.slice(0, -1))) / 100));
}
