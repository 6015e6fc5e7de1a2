// What the request's phase files share: the activity proxies, the chunk size, and the defaults the
// CRD leaves to the workflow.
import { longSteps, steps } from '../proxies.js';

export const act = steps;
export const waits = longSteps('30 minutes');

/** Per-node steps (cordons, child starts, heals) are issued this many at a time, so a run can switch between chunks. */
export const CHUNK = 100;
/** Temporal's default limit on one search attribute value is 2,048 bytes; leave room. */
const SEARCH_ATTRIBUTE_BYTES = 2_000;

/**
 * The first names that fit a search attribute value: Temporal terminates a workflow whose upsert
 * exceeds the limit (2 KiB by default), which a batch of a hundred long node names does.
 */
export function fitting(names: string[], maxBytes = SEARCH_ATTRIBUTE_BYTES): string[] {
  let size = 2;
  const out: string[] = [];
  for (const n of names) {
    size += n.length + 3; // JSON-encoded; node names are DNS names (ASCII)
    if (size > maxBytes) break;
    out.push(n);
  }
  return out;
}

/** Defaults the CRD leaves to us (validStatusCodes). */
export function fill<T extends { validStatusCodes?: number[] }>(checks: T[]): Array<T & { validStatusCodes: number[] }> {
  return checks.map((c) => ({ ...c, validStatusCodes: c.validStatusCodes?.length ? c.validStatusCodes : [200] }));
}
