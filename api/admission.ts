// Helpers that keep zod's check and the apiserver's admission alike: CEL rules in the CRD are
// generated from the same regular expressions and limits as the zod check, and zod's messages
// for enums read like the apiserver's, so one corpus of bad objects tests both.
import { z } from 'zod';

/** A CEL string literal for s (single quotes; backslashes and quotes escaped). */
export function celString(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** z.enum whose refusal reads as the apiserver's: Unsupported value: "x": supported values: "a", "b". */
export function kubeEnum<const T extends readonly [string, ...string[]]>(values: T) {
  const supported = values.map((v) => `"${v}"`).join(', ');
  return z.enum(values, { error: (iss) => (iss.input === undefined ? 'Required value' : `Unsupported value: ${JSON.stringify(iss.input)}: supported values: ${supported}`) });
}

/** A zod issue path as the apiserver writes field paths: spec.pods[0].selector.matchLabels[bad key]. */
export function fieldPath(path: readonly PropertyKey[], root = 'spec'): string {
  return path.reduce<string>((out, p) => (typeof p === 'number' ? `${out}[${p}]` : typeof p === 'string' && /^[A-Za-z_][A-Za-z0-9_]*$/.test(p) ? `${out}.${p}` : `${out}[${String(p)}]`), root);
}

/** Readable problems of a failed parse, each naming its field: "spec.drain.order: …". */
export function issueMessages(error: z.ZodError, root = 'spec'): string[] {
  return error.issues.map((i) => `${fieldPath(i.path, root)}: ${i.message}`);
}

/**
 * A string of at most maxLength characters matching pattern (JavaScript and RE2 alike): zod says
 * `"<text>" is not <what>`; the CRD carries the same pattern (the apiserver names the field and the value).
 */
export function patterned(pattern: string, maxLength: number, what: string) {
  const re = new RegExp(pattern);
  return z
    .string()
    .max(maxLength)
    .superRefine((s, ctx) => {
      if (!re.test(s)) ctx.addIssue({ code: 'custom', message: `"${s}" is not ${what}` });
    })
    .meta({ pattern });
}

/**
 * A CEL rule on a list that compares its entries with each other (order, uniqueness). The apiserver
 * names the list, and fieldPath cannot hold an index, so the message names the first entry at fault
 * by its path from the list's own name (a list may sit at different depths in different kinds):
 * "spec.drainPlan: Invalid value: "array": drainPlan[1]: entries must be ordered …". `bad` is a CEL
 * condition on entry `e` at index `i` (two-variable comprehensions, Kubernetes ≥ 1.32); `list` is
 * the list's field name, `maxItems` its bound, `below` a field of the entry to name. The index is looked up in a list of literals: the cost estimate takes string(int)
 * for a string of any length, and the concatenation then exceeds the CRD's budget a hundredfold.
 */
export function entryRule(list: string, maxItems: number, bad: string, message: string, below = ''): { rule: string; messageExpression: string } {
  const digits = `[${Array.from({ length: maxItems }, (_, i) => `'${i}'`).join(', ')}]`;
  return {
    rule: `!self.exists(i, e, ${bad})`,
    messageExpression: `${celString(`${list}[`)} + ${digits}[self.transformList(i, e, ${bad}, i)[0]] + ${celString(`]${below}: ${message}`)}`,
  };
}

/** entryRule's condition "an earlier entry equals entry i" (or has the same `field`): the later of two is at fault. */
export const repeatsEarlier = (field?: string) => `self.exists(j, x, j < i && ${field ? `x.${field} == e.${field}` : 'x == e'})`;
