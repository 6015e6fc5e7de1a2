// Label selector matching (metav1.LabelSelector semantics: requirements ANDed, a nil or empty
// selector matches everything) and its `kubectl -l` text. Free of zod, so workflow code (the
// maintenance planner, the drain's plan entries) can match without pulling zod into the workflow
// bundle; the zod type and the syntax checks are label-selector.ts's.
import type { LabelSelector } from './label-selector.js';

/** Whether the selector has no requirement at all (it matches everything). */
export function isEmptySelector(sel: LabelSelector | undefined): boolean {
  return Object.keys(sel?.matchLabels ?? {}).length === 0 && (sel?.matchExpressions ?? []).length === 0;
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
