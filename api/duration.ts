// Durations as Kubernetes writes them (metav1.Duration / Go: "90s", "5m", "1h30m", "250ms"), parsed
// by one function. Every duration field in a spec has a minimum and a maximum, checked by zod and,
// in the CRD, by the same bounds in CEL: an unbounded duration once wedged a workflow (a timeout of
// 99999999999h made Date throw RangeError on every workflow task) or failed a cycle at once (0s).
import { z } from 'zod';
import { celString } from './admission.js';
import { DURATION_MAX_LENGTH, DURATION_PATTERN, isDuration, parseDuration } from './duration-text.js';

export { DURATION_MAX_LENGTH, DURATION_PATTERN, parseDuration };

const FORMAT = 'is not a duration such as 90s, 5m, 1h30m or 250ms (at most 6 digits per number, 20 characters)';

/**
 * A duration text, optionally between min and max (inclusive, written as durations): checked by
 * zod and, in the CRD, by the same pattern and (in CEL) the same bounds, with the same message.
 */
export function duration(bounds?: { min: string; max: string }) {
  const range = bounds && ([parseDuration(bounds.min), parseDuration(bounds.max)] as const);
  const outOf = bounds && `must be a duration between ${bounds.min} and ${bounds.max}`;
  const pattern = celString(DURATION_PATTERN);
  return z
    .string()
    .max(DURATION_MAX_LENGTH)
    .superRefine((t, ctx) => {
      if (!isDuration(t)) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(t)} ${FORMAT}` });
      else if (range && (parseDuration(t) < range[0] || parseDuration(t) > range[1])) ctx.addIssue({ code: 'custom', message: `${JSON.stringify(t)} ${outOf}` });
    })
    .meta({
      pattern: DURATION_PATTERN,
      // CEL's duration() must not see a malformed text (the pattern refuses it, with its own message).
      ...(bounds && {
        'x-kubernetes-validations': [
          { rule: `!self.matches(${pattern}) || (duration(self) >= duration(${celString(bounds.min)}) && duration(self) <= duration(${celString(bounds.max)}))`, messageExpression: `'"' + self + '" ${outOf}'` },
        ],
      }),
    });
}

/** Any well-formed duration (no bounds). */
export const Duration = duration();

/** The bounds of every duration field (docs/design.md lists them). */
export const DURATION_BOUNDS = {
  cyclingTimeout: { min: '1m', max: '168h' },
  healthCheckWaitPeriod: { min: '1s', max: '1h' },
  podEvictionTimeout: { min: '1s', max: '168h' },
  volumeDetachTimeout: { min: '1s', max: '168h' },
  evacuationProgressDeadline: { min: '10s', max: '6h' },
  driftObserverInterval: { min: '5s', max: '24h' },
} as const;
