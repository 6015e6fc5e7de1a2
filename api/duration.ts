// Durations as Kubernetes writes them (metav1.Duration / Go: "90s", "5m", "1h30m", "250ms").
import { z } from 'zod';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
export const DURATION_PATTERN = '^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$';

export function parseDuration(text: string): number {
  if (!new RegExp(DURATION_PATTERN).test(text)) throw new Error(`"${text}" is not a duration (examples: 90s, 5m, 1h30m)`);
  let ms = 0;
  for (const m of text.matchAll(PART)) ms += Number(m[1]) * UNIT_MS[m[2]!]!;
  return ms;
}

export const Duration = z.string().regex(new RegExp(DURATION_PATTERN), 'a duration such as 90s, 5m or 1h30m');
