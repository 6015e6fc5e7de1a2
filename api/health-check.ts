// HTTP health checks of a CycleNodeRequest (Cyclops semantics) and their inputs: an http(s) URL
// that may name the node's IP, and a regular expression for the body. zod checks both, and the
// CRD the same (a pattern; a CEL rule), so a request whose checks could never pass for a typo is
// refused before anything starts.
import { z } from 'zod';
import { celString } from './admission.js';
import { duration, DURATION_BOUNDS } from './duration.js';

// One pattern, read alike by JavaScript and RE2 (the CRD's `pattern`): http(s), a host name, an
// IPv6 literal or the node-IP placeholder, an optional port up to 65535, then printable ASCII
// (braces only in the placeholder). It is stricter than either URL parser, so zod and admission
// cannot disagree on what they accept.
const PLACEHOLDER = '[{][{] ?[.]NodeIP ?[}][}]';
const HOST = `([A-Za-z0-9.-]+|\\[[0-9A-Fa-f:.]+\\]|${PLACEHOLDER})`;
const PORT = '(:(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[0-9]{1,4}))?';
const REST = `([/?#]([!-z|~]|${PLACEHOLDER})*)?`;
export const HTTP_ENDPOINT_PATTERN = `^https?://${HOST}${PORT}${REST}$`;
const ENDPOINT_RE = new RegExp(HTTP_ENDPOINT_PATTERN);
const ENDPOINT_RULE = "an http or https URL: a host name, [IPv6] or {{ .NodeIP }} (the node's IP), an optional port, then printable ASCII without spaces";

/** The endpoint with the node's IP in place of the placeholder ({{ .NodeIP }} or {{.NodeIP}}). */
export function endpointFor(template: string, nodeIP: string | undefined): string {
  return template.replace(new RegExp(PLACEHOLDER, 'g'), nodeIP ?? '');
}

export const HttpEndpoint = z
  .string()
  .max(1024)
  .superRefine((t, ctx) => {
    if (!ENDPOINT_RE.test(t)) ctx.addIssue({ code: 'custom', message: `"${t}" is not ${ENDPOINT_RULE}` });
  })
  // CEL rather than `pattern`, for a message a person can read.
  .meta({ 'x-kubernetes-validations': [{ rule: `self.matches(${celString(HTTP_ENDPOINT_PATTERN)})`, messageExpression: `'"' + self + '" is not ' + ${celString(ENDPOINT_RULE)}` }] });

// Syntax one of JavaScript (which runs the check) and RE2 (which checks it at admission) lacks:
// lookaround and backreferences (not RE2); inline flags, \A \z \Q \C and POSIX classes (not JavaScript).
const NOT_RE2 = '[(][?]<?[=!]|\\\\[1-9]|\\\\k<';
const NOT_JS = '[(][?]P?<?[a-zA-Z-]+[:)]|[(][?]P<|\\\\[AzQCpP]|\\[\\[:';
const NOT_BOTH = new RegExp(`${NOT_RE2}|${NOT_JS}`);
const REGEX_RULE = 'a regular expression valid in both JavaScript and RE2 (no lookaround, backreferences or inline flags)';

function isPortableRegex(r: string): boolean {
  if (NOT_BOTH.test(r)) return false;
  try {
    new RegExp(r);
    return true;
  } catch {
    return false;
  }
}

export const PortableRegex = z
  .string()
  .max(1024)
  .superRefine((r, ctx) => {
    if (!isPortableRegex(r)) ctx.addIssue({ code: 'custom', message: `"${r}" is not ${REGEX_RULE}` });
  })
  .meta({
    'x-kubernetes-validations': [
      { rule: `!self.matches(${celString(NOT_BOTH.source)})`, messageExpression: `'"' + self + '" is not ' + ${celString(REGEX_RULE)}` },
    ],
  });

/**
 * CEL on a list of checks: every regexMatch compiles as RE2. ''.matches(r) compiles r; a malformed
 * expression is an evaluation error, which refuses the object with RE2's reason, naming the node the
 * rule sits on and saying the rule's message (not a messageExpression, not a fieldPath). An
 * evaluation error is not ratcheted, so the rule skips a list that is unchanged (optionalOldSelf):
 * otherwise a request stored before this rule could never be written again, not its status, not
 * its finalizers. Items of the atomic list have no oldSelf, so the rules sit on the list, one per
 * index, each message naming its entry: "healthChecks[0].regexMatch: …" (#24.10).
 */
export function regexCompilesRules(list: string, maxItems: number, below = ''): Array<{ rule: string; optionalOldSelf: true; message: string }> {
  return Array.from({ length: maxItems }, (_, i) => {
    const r = `self[${i}]${below}.regexMatch`;
    return {
      rule: `(oldSelf.hasValue() && oldSelf.value() == self) || size(self) <= ${i} || !has(${r}) || ''.matches(${r}) || !''.matches(${r})`,
      optionalOldSelf: true as const,
      message: `${list}[${i}]${below}.regexMatch: ${REGEX_RULE}`,
    };
  });
}

const StatusCodes = z.array(z.int32().min(100).max(599)).min(1).max(16).default([200]).describe('HTTP status codes that count as passing (default: 200).');

export const HealthCheck = z.object({
  endpoint: HttpEndpoint.describe('URL; {{ .NodeIP }} is replaced by the node\'s InternalIP.'),
  waitPeriod: duration(DURATION_BOUNDS.healthCheckWaitPeriod).describe('How long a new node may take to pass.'),
  validStatusCodes: StatusCodes,
  regexMatch: PortableRegex.optional().describe('A regular expression the body must match.'),
});
export type HealthCheck = z.infer<typeof HealthCheck>;

export const PreTerminationCheck = z.object({
  triggerEndpoint: HttpEndpoint.describe('POSTed once after the node is cordoned.'),
  validStatusCodes: StatusCodes,
  healthCheck: HealthCheck.describe('Polled after the trigger until it passes or its waitPeriod ends.'),
});
export type PreTerminationCheck = z.infer<typeof PreTerminationCheck>;
