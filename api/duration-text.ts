// Durations as Kubernetes writes them ("90s", "5m", "1h30m", "250ms"), parsed by one function:
// zod-free, so the workflows may import it (test/unit/layers.test.ts keeps zod out of their bundle).
// The zod type and its CEL twin are in duration.ts.

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const PART = /([0-9]+(?:[.][0-9]+)?)(ms|s|m|h)/g;
/**
 * No backslashes (the text is also a CEL string literal) and at most 6 integer digits per part in at
 * most 20 characters, so Go's and CEL's duration() (int64 nanoseconds) cannot overflow on any text
 * the pattern admits.
 */
export const DURATION_PATTERN = '^([0-9]{1,6}([.][0-9]{1,9})?(ms|s|m|h))+$';
export const DURATION_MAX_LENGTH = 20;
export const DURATION_RE = new RegExp(DURATION_PATTERN);

export const isDuration = (text: string) => text.length <= DURATION_MAX_LENGTH && DURATION_RE.test(text);

/** Milliseconds of a duration; malformed, negative or over-long text throws. */
export function parseDuration(text: string): number {
  if (!isDuration(text)) throw new Error(`"${text}" is not a duration (examples: 90s, 5m, 1h30m)`);
  let ms = 0;
  for (const m of text.matchAll(PART)) ms += Number(m[1]) * UNIT_MS[m[2]!]!;
  return ms;
}
