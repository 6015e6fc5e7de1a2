// Payload sizes in workflow tests: the recorder (bench/payload-sizes.ts, shared with the scale
// benchmark) and what a test asserts with it.
import { PAYLOAD_KINDS, kib, type PayloadRecord, type PayloadSizes } from '../../bench/payload-sizes.js';

export { PayloadSizes, PAYLOAD_KINDS, kib, type PayloadKind, type PayloadRecord } from '../../bench/payload-sizes.js';

/** The largest payload of each kind over `budget`, as lines naming it (empty: all within). */
export function payloadsOver(sizes: PayloadSizes, budget: number): string[] {
  return PAYLOAD_KINDS.map((k) => sizes.largest(k))
    .filter((r): r is PayloadRecord => r !== undefined && r.bytes > budget)
    .map((r) => `${r.kind} ${kib(r.bytes)} (${r.name}, ${r.workflowId})`);
}

/** A stopOn for runScale: end the run at the first payload over `budget` (the test then fails at once, naming it). */
export const stopOver = (budget: number) => (r: PayloadRecord) => (r.bytes > budget ? `stopped: ${r.kind} of ${kib(r.bytes)} (${r.name}) is over ${kib(budget)}` : undefined);
