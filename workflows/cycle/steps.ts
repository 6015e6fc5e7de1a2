// What the request's phase files share: the activity proxies, the chunk size, and the defaults the
// CRD leaves to the workflow.
import { longSteps, steps } from '../proxies.js';

export const act = steps;
export const waits = longSteps('30 minutes');

/** Per-node steps (cordons, child starts, heals) are issued this many at a time, so a run can switch between chunks. */
export const CHUNK = 100;
/** Defaults the CRD leaves to us (validStatusCodes). */
export function fill<T extends { validStatusCodes?: number[] }>(checks: T[]): Array<T & { validStatusCodes: number[] }> {
  return checks.map((c) => ({ ...c, validStatusCodes: c.validStatusCodes?.length ? c.validStatusCodes : [200] }));
}
