// metav1.LabelSelector: the zod type (source of the CRD schema), validation with the apiserver's
// rules for keys and values, and matching. A nil or empty selector matches everything.
// The syntax is checked twice from the same text: by zod (drain time, the bridge, the CLI) and by
// the CRD's patterns and CEL rules (admission), so a stored object can never be one zod refuses.
import { z } from 'zod';
import { celString, kubeEnum } from './admission.js';

// Regular expressions as text that JavaScript, RE2 (CEL matches()) and CEL string literals read
// alike: no backslashes, no lookaround.
const NAME = '[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?';
const DNS_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS_SUBDOMAIN = `${DNS_LABEL}([.]${DNS_LABEL})*`;
/** Qualified name: optional DNS-subdomain prefix (≤253) + "/" + a name of ≤63 alphanumerics, '-', '_', '.'. */
export const LABEL_KEY_PATTERN = `^(${DNS_SUBDOMAIN}/)?${NAME}$`;
export const LABEL_VALUE_PATTERN = `^(${NAME})?$`;
/** Node names (DNS subdomain, ≤253) and namespace names (DNS label, ≤63). */
export const DNS_SUBDOMAIN_PATTERN = `^${DNS_SUBDOMAIN}$`;
export const DNS_LABEL_PATTERN = `^${DNS_LABEL}$`;
export const LABEL_KEY_MAX = 253 + 1 + 63;

const KEY_RE = new RegExp(LABEL_KEY_PATTERN);
const VALUE_RE = new RegExp(LABEL_VALUE_PATTERN);

const KEY_RULE = 'an optional DNS subdomain prefix of at most 253 characters and "/", then a name of 1 to 63 letters, digits, "-", "_" or ".", beginning and ending with a letter or digit';
const VALUE_RULE = 'empty, or 1 to 63 letters, digits, "-", "_" or ".", beginning and ending with a letter or digit';

export const isLabelKey = (k: string): boolean => k.length <= LABEL_KEY_MAX && KEY_RE.test(k) && (!k.includes('/') || k.indexOf('/') <= 253);
export const isLabelValue = (v: string): boolean => v.length <= 63 && VALUE_RE.test(v);

/** The same tests as isLabelKey / isLabelValue, as CEL on the string expression e. */
export const celIsLabelKey = (e: string) => `${e}.matches(${celString(LABEL_KEY_PATTERN)}) && (!${e}.contains('/') || ${e}.indexOf('/') <= 253)`;
const celQuoted = (e: string) => `'"' + ${e} + '"'`;

export function labelKeyError(key: string): string | undefined {
  return isLabelKey(key) ? undefined : `label key "${key}" is not valid: ${KEY_RULE}`;
}

export function labelValueError(value: string): string | undefined {
  return isLabelValue(value) ? undefined : `label value "${value}" is not valid: ${VALUE_RULE}`;
}

// Keys and values carry the pattern itself (OpenAPI `pattern` costs nothing in the CEL budget; a
// CEL rule per list item exceeds it). Only what a pattern cannot say is CEL: the prefix length.
const PREFIX_RULE = "!self.contains('/') || self.indexOf('/') <= 253";

/** A label key (qualified name): zod checks it with isLabelKey; the CRD with the same pattern and prefix bound. */
export const LabelKey = z
  .string()
  .max(LABEL_KEY_MAX)
  .superRefine((k, ctx) => {
    const e = labelKeyError(k);
    if (e) ctx.addIssue({ code: 'custom', message: e });
  })
  .meta({ pattern: LABEL_KEY_PATTERN, 'x-kubernetes-validations': [{ rule: PREFIX_RULE, messageExpression: `'label key ' + ${celQuoted('self')} + ' is not valid: ' + ${celString(KEY_RULE)}` }] });

export const LabelValue = z
  .string()
  .max(63)
  .superRefine((v, ctx) => {
    const e = labelValueError(v);
    if (e) ctx.addIssue({ code: 'custom', message: e });
  })
  .meta({ pattern: LABEL_VALUE_PATTERN });

/** label key → T; the keys are checked as label keys (CEL on the map: the CRD cannot constrain map keys otherwise). */
export function labelMap<T extends z.ZodType>(value: T, maxProperties: number) {
  const badKey = `self.filter(k, !(${celIsLabelKey('k')}))[0]`;
  return z
    .record(z.string(), value)
    .superRefine((m, ctx) => {
      const n = Object.keys(m).length;
      if (n > maxProperties) ctx.addIssue({ code: 'custom', message: `Too many: ${n}: must have at most ${maxProperties} items` });
      for (const k of Object.keys(m)) {
        const e = labelKeyError(k);
        if (e) ctx.addIssue({ code: 'custom', path: [k], message: e });
      }
    })
    .meta({
      maxProperties,
      'x-kubernetes-validations': [{ rule: `self.all(k, ${celIsLabelKey('k')})`, messageExpression: `'label key ' + ${celQuoted(badKey)} + ' is not valid: ' + ${celString(KEY_RULE)}` }],
    });
}

export const LabelSelectorOperator = kubeEnum(['In', 'NotIn', 'Exists', 'DoesNotExist']);

export const LabelSelectorRequirement = z
  .object({
    key: LabelKey.describe('The label key the requirement reads.'),
    operator: LabelSelectorOperator.describe('In, NotIn, Exists or DoesNotExist.'),
    values: z.array(LabelValue).max(256).optional().describe('The label values: at least one for In and NotIn, none for Exists and DoesNotExist.'),
  })
  .superRefine((r, ctx) => {
    if (!LabelSelectorOperator.safeParse(r.operator).success) return; // refused by the enum already
    const n = r.values?.length ?? 0;
    const needs = r.operator === 'In' || r.operator === 'NotIn';
    if (needs && n === 0) ctx.addIssue({ code: 'custom', path: ['values'], message: `operator ${r.operator} on "${r.key}" needs values` });
    if (!needs && n > 0) ctx.addIssue({ code: 'custom', path: ['values'], message: `operator ${r.operator} on "${r.key}" takes no values` });
  })
  .meta({
    'x-kubernetes-validations': [
      {
        rule: "self.operator in ['In', 'NotIn'] ? (has(self.values) && size(self.values) > 0) : (!has(self.values) || size(self.values) == 0)",
        messageExpression: `'operator ' + self.operator + ' on "' + self.key + '" ' + (self.operator in ['In', 'NotIn'] ? 'needs values' : 'takes no values')`,
        fieldPath: '.values',
      },
    ],
  });

export const LabelSelector = z
  .object({
    matchLabels: labelMap(LabelValue, 64).optional().describe('Labels an object must have, each with exactly this value.'),
    matchExpressions: z.array(LabelSelectorRequirement).max(64).optional().describe('Requirements an object must meet, all of them.'),
  })
  .meta({ 'x-kubernetes-map-type': 'atomic' })
  .describe('A label selector (metav1.LabelSelector): matchLabels and matchExpressions, ANDed.');

export type LabelSelector = z.infer<typeof LabelSelector>;

// Matching lives in the zod-free label-match.ts (workflow code matches selectors); re-exported here.
export { isEmptySelector, matchesSelector, selectorToString } from './label-match.js';
