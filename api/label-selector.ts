// metav1.LabelSelector: the zod type (source of the CRD schema), validation with the apiserver's
// rules for keys and values, and matching. A nil or empty selector matches everything.
import { z } from 'zod';

// Qualified name: optional DNS-subdomain prefix + "/" + name of ≤63 alphanumerics, '-', '_', '.'.
const NAME = /^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$/;
const PREFIX = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;

export function labelKeyError(key: string): string | undefined {
  const parts = key.split('/');
  if (parts.length > 2) return `label key "${key}" has more than one "/"`;
  const name = parts.length === 2 ? parts[1]! : parts[0]!;
  if (parts.length === 2) {
    const prefix = parts[0]!;
    if (prefix.length === 0 || prefix.length > 253 || !PREFIX.test(prefix)) return `label key "${key}" has an invalid prefix`;
  }
  if (name.length === 0 || name.length > 63 || !NAME.test(name)) return `label key "${key}" is not a valid name`;
  return undefined;
}

export function labelValueError(value: string): string | undefined {
  return value.length > 63 || !VALUE.test(value) ? `label value "${value}" is not valid` : undefined;
}

export const LabelSelectorRequirement = z
  .object({
    key: z.string().min(1),
    operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']),
    values: z.array(z.string()).optional(),
  })
  .meta({
    'x-kubernetes-validations': [
      {
        rule: "self.operator in ['In', 'NotIn'] ? (has(self.values) && size(self.values) > 0) : (!has(self.values) || size(self.values) == 0)",
        message: 'values must be non-empty for In and NotIn, and empty for Exists and DoesNotExist',
      },
    ],
  });

export const LabelSelector = z
  .object({
    matchLabels: z.record(z.string(), z.string()).optional(),
    matchExpressions: z.array(LabelSelectorRequirement).optional(),
  })
  .meta({ 'x-kubernetes-map-type': 'atomic' });

export type LabelSelector = z.infer<typeof LabelSelector>;

/** Every problem with a selector, in the apiserver's terms; empty when it is valid. */
export function selectorErrors(sel: LabelSelector | undefined): string[] {
  if (!sel) return [];
  const errs: string[] = [];
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) {
    const e = labelKeyError(k) ?? labelValueError(v);
    if (e) errs.push(e);
  }
  for (const r of sel.matchExpressions ?? []) {
    const ke = labelKeyError(r.key);
    if (ke) errs.push(ke);
    const n = r.values?.length ?? 0;
    if ((r.operator === 'In' || r.operator === 'NotIn') && n === 0) errs.push(`operator ${r.operator} on "${r.key}" needs values`);
    if ((r.operator === 'Exists' || r.operator === 'DoesNotExist') && n > 0) errs.push(`operator ${r.operator} on "${r.key}" takes no values`);
    for (const v of r.values ?? []) {
      const ve = labelValueError(v);
      if (ve) errs.push(ve);
    }
  }
  return errs;
}

/** Whether labels satisfy the selector (ANDed requirements; nil/empty matches all). */
export function matchesSelector(sel: LabelSelector | undefined, labels: Record<string, string> | undefined): boolean {
  if (!sel) return true;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (l[k] !== v) return false;
  for (const r of sel.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    const vals = r.values ?? [];
    switch (r.operator) {
      case 'In':
        if (!has || !vals.includes(l[r.key]!)) return false;
        break;
      case 'NotIn':
        if (has && vals.includes(l[r.key]!)) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
    }
  }
  return true;
}

/** The selector in `kubectl -l` syntax, for list calls and messages. */
export function selectorToString(sel: LabelSelector | undefined): string {
  if (!sel) return '';
  const parts = Object.entries(sel.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const r of sel.matchExpressions ?? []) {
    const vals = (r.values ?? []).join(',');
    if (r.operator === 'In') parts.push(`${r.key} in (${vals})`);
    else if (r.operator === 'NotIn') parts.push(`${r.key} notin (${vals})`);
    else if (r.operator === 'Exists') parts.push(r.key);
    else parts.push(`!${r.key}`);
  }
  return parts.join(',');
}
