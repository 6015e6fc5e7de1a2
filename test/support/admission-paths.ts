// Which field a refusal names, worked out from the generated CRD without an apiserver (the #24.10
// unit test), and the one rule for "names the exact path" that it and the bad-input tests share.
//
// The apiserver names the schema node a check sits on: a keyword's node (pattern, enum, maxItems…),
// a CEL rule's node plus its fieldPath when the rule is false, the rule's node alone when the rule
// fails to evaluate (a regular expression that does not compile). A rule on a list cannot name an
// entry, so its message does, from the list's name: "drainPlan[1]: …" (api/admission.ts entryRule),
// "healthChecks[0].regexMatch: …". A rule on a map cannot name a key, so its message quotes it.
import { crdManifest, type JsonSchema } from '../../api/crd.js';
import { CRDS } from '../../api/crds.js';

/** A piece of a message: literal text, one of some texts (a ternary of literals), or anything (a computed part). */
export type Part = { text: string } | { oneOf: string[] } | { any: true };

/** A refusal the CRD can give: the field the apiserver names, and its message as parts. */
export interface Refusal {
  field: string;
  parts: Part[];
  /** The field is a list or a map: the message may name an entry or a key of it. */
  holds?: 'list' | 'map';
}

/** A field path as segments: spec.pods[0].selector.matchLabels[a/b.c] → spec, pods, 0, selector, matchLabels, a/b.c. */
export function segments(path: string): Array<string | number> {
  const out: Array<string | number> = [];
  const re = /\.?([^.[\]]+)|\[([^\]]*)\]/g;
  for (let m = re.exec(path); m; m = re.exec(path)) out.push(m[1] !== undefined ? m[1] : /^\d+$/.test(m[2]!) ? Number(m[2]) : m[2]!);
  return out;
}

/**
 * A path with every name after a dot, as the apiserver writes a map's keys in schema errors
 * (spec.selector.matchLabels.slipway.dev/node-group; CEL errors and zod write [slipway.dev/node-group]).
 */
export const dotted = (path: string) => segments(path).map((x, i) => (typeof x === 'number' ? `[${x}]` : i ? `.${x}` : x)).join('');

/** The path from the list's own name: spec.template.healthChecks, spec.template.healthChecks[0].regexMatch → healthChecks[0].regexMatch. */
const fromList = (field: string, path: string) => `${String(segments(field).at(-1))}${dotted(path).slice(dotted(field).length)}`;

/**
 * Whether a refusal naming `field` with `message` names `path` exactly: the field is the path, or the
 * field is the list (map) the path is in and the message names the entry from the list's name on
 * ("drainPlan[1]: …"; quotes the key).
 */
export function namesPath(field: string, message: string, path: string): boolean {
  const [f, p] = [dotted(field), dotted(path)];
  if (f === p) return true;
  if (/^\[\d+\]/.test(p.slice(f.length)) && p.startsWith(f)) return message.includes(`${fromList(field, path)}: `);
  return p.startsWith(`${f}.`) && message.includes(`"${p.slice(f.length + 1)}"`);
}

const esc = (x: string) => x.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const ANY = '[\\s\\S]*';
const alternatives = (xs: string[]) => `(?:${xs.map(esc).join('|')})`;
const texts = (p: Part) => ('text' in p ? [p.text] : 'oneOf' in p ? p.oneOf : undefined);
const full = (p: Part) => (texts(p) ? alternatives(texts(p)!) : ANY);

/**
 * Whether `said` is part of some message the parts can make, overlapping its own text (a computed
 * part alone could say anything). A message that is all computed (an evaluation error) says anything.
 */
export function canSay(parts: Part[], said: string): boolean {
  if (parts.every((p) => 'any' in p) || (parts.length === 2 && 'any' in parts[0]! && 'text' in parts[1]! && parts[1].text.startsWith(' evaluating rule: '))) return true;
  const some = (xs: string[]) => alternatives(xs.filter((x) => x !== ''));
  for (let s = 0; s < parts.length; s++) {
    const one = texts(parts[s]!);
    if (one?.some((t) => t.includes(said))) return true;
    for (let e = s + 1; e < parts.length; e++) {
      const [first, last] = [parts[s]!, parts[e]!];
      // Each end overlaps its part: a literal end by at least a character.
      const start = texts(first) ? some(texts(first)!.flatMap((x) => [...x].map((_, i) => x.slice(i)))) : ANY;
      const end = texts(last) ? some(texts(last)!.flatMap((x) => [...x].map((_, i) => x.slice(0, i + 1)))) : ANY;
      if (!texts(first) && !texts(last) && e === s + 1) continue;
      const middle = parts.slice(s + 1, e).map(full).join('');
      if (new RegExp(`^${start}${middle}${end}$`).test(said)) return true;
    }
  }
  return false;
}

/**
 * namesPath for a refusal whose message is made of parts: only a rule on a list (map) itself may name
 * an entry (key) in its message; a computed part of the path it names is the index, a quoted
 * computed part the key.
 */
function refusalNamesPath(r: Refusal, path: string): boolean {
  const [f, p] = [dotted(r.field), dotted(path)];
  if (f === p) return true;
  const rest = p.startsWith(f) ? p.slice(f.length) : '';
  if (r.holds === 'map' && rest.startsWith('.')) return canSay(r.parts, `"${rest.slice(1)}"`);
  if (r.holds !== 'list' || !/^\[\d+\]/.test(rest)) return false;
  // The message says the entry from the list's name on: literally, or beginning with it, its index computed (drainPlan[<digits>]: …).
  const named = fromList(r.field, path);
  if (r.parts.some((x) => 'text' in x && x.text.includes(`${named}: `))) return true;
  let head = '';
  for (const x of r.parts) {
    if ('text' in x && x.text.includes(': ')) return new RegExp(`^${head}${esc(x.text.slice(0, x.text.indexOf(': ')))}$`).test(named);
    head += 'any' in x ? '\\d+' : full(x);
  }
  return false;
}

/** Does the generated CRD of `kind` refuse `spec` naming `path` and saying `said`? Also every refusal it can give, for a failed assertion. */
export function crdNames(kind: string, spec: unknown, path: string, said: string): { names: boolean; refusals: Refusal[] } {
  const def = CRDS.find((d) => d.kind === kind);
  if (!def) throw new Error(`no CRD of kind ${kind}`);
  const root = (crdManifest(def) as { spec: { versions: Array<{ schema: { openAPIV3Schema: { properties: { spec: JsonSchema } } } }> } }).spec.versions[0]!.schema.openAPIV3Schema.properties.spec;
  const refusals: Refusal[] = [];
  walk(root, spec, 'spec', refusals);
  return { names: refusals.some((r) => refusalNamesPath(r, path) && (said === '' || canSay(r.parts, said))), refusals };
}

const fixed = (field: string, message: string): Refusal => ({ field, parts: [{ text: message }] });

// The schema's own keywords, checked as the apiserver checks them (those the CRDs use), with its words.
function walk(s: JsonSchema, v: unknown, path: string, out: Refusal[]): void {
  if (v === undefined || (v === null && s.nullable)) return;
  const type = s.type as string | undefined;
  const is = { object: typeof v === 'object' && v !== null && !Array.isArray(v), array: Array.isArray(v), string: typeof v === 'string', integer: Number.isInteger(v), number: typeof v === 'number', boolean: typeof v === 'boolean' };
  if (type && !s['x-kubernetes-int-or-string'] && !is[type as keyof typeof is]) {
    out.push(fixed(path, `Invalid value: ${JSON.stringify(v)}: ${path} in body must be of type ${type}`));
    return;
  }
  // int-or-string: anything but an integer or a string is refused before any rule runs (seen on the stack).
  if (s['x-kubernetes-int-or-string'] && !is.integer && !is.string) {
    out.push(fixed(path, `Invalid value: "${is.number ? 'number' : typeof v}": ${path} in body must be of type integer,string: "${is.number ? 'number' : typeof v}"`));
    return;
  }
  if (Array.isArray(s.enum) && !s.enum.includes(v)) out.push(fixed(path, `Unsupported value: ${JSON.stringify(v)}: supported values: ${s.enum.map((e) => JSON.stringify(e)).join(', ')}`));
  if (typeof v === 'string') {
    if (typeof s.maxLength === 'number' && v.length > s.maxLength) out.push(fixed(path, `Too long: may not be more than ${s.maxLength} bytes`));
    if (typeof s.minLength === 'number' && v.length < s.minLength) out.push(fixed(path, `Invalid value: ${JSON.stringify(v)}: ${path} in body should be at least ${s.minLength} chars long`));
    if (typeof s.pattern === 'string' && !new RegExp(s.pattern).test(v)) out.push(fixed(path, `Invalid value: ${JSON.stringify(v)}: ${path} in body should match '${s.pattern}'`));
  }
  if (typeof v === 'number') {
    if (typeof s.minimum === 'number' && (s.exclusiveMinimum ? v <= s.minimum : v < s.minimum)) out.push(fixed(path, `Invalid value: ${v}: ${path} in body should be greater than ${s.exclusiveMinimum ? '' : 'or equal to '}${s.minimum}`));
    if (typeof s.maximum === 'number' && (s.exclusiveMaximum ? v >= s.maximum : v > s.maximum)) out.push(fixed(path, `Invalid value: ${v}: ${path} in body should be less than ${s.exclusiveMaximum ? '' : 'or equal to '}${s.maximum}`));
  }
  if (Array.isArray(v)) {
    if (typeof s.maxItems === 'number' && v.length > s.maxItems) out.push(fixed(path, `Too many: ${v.length}: must have at most ${s.maxItems} items`));
    if (typeof s.minItems === 'number' && v.length < s.minItems) out.push(fixed(path, `Invalid value: ${v.length}: ${path} in body should have at least ${s.minItems} items`));
    const keys = s['x-kubernetes-list-map-keys'] as string[] | undefined;
    if (s['x-kubernetes-list-type'] === 'map' && keys) {
      const seen = new Set<string>();
      v.forEach((e, i) => {
        const k = JSON.stringify(keys.map((key) => (e as Record<string, unknown>)?.[key]));
        if (seen.has(k)) out.push(fixed(`${path}[${i}]`, `Duplicate value: ${JSON.stringify(Object.fromEntries(keys.map((key) => [key, (e as Record<string, unknown>)[key]])))}`));
        seen.add(k);
      });
    }
    if (s.items) v.forEach((e, i) => walk(s.items as JsonSchema, e, `${path}[${i}]`, out));
  }
  if (is.object) {
    const o = v as Record<string, unknown>;
    if (typeof s.maxProperties === 'number' && Object.keys(o).length > s.maxProperties) out.push(fixed(path, `Too many: ${Object.keys(o).length}: must have at most ${s.maxProperties} items`));
    for (const k of (s.required as string[] | undefined) ?? []) if (o[k] === undefined) out.push(fixed(`${path}.${k}`, 'Required value'));
    const props = s.properties as Record<string, JsonSchema> | undefined;
    for (const [k, x] of Object.entries(o)) {
      if (props?.[k]) walk(props[k], x, `${path}.${k}`, out);
      else if (s.additionalProperties) walk(s.additionalProperties as JsonSchema, x, `${path}[${k}]`, out);
    }
  }
  const holds = s.type === 'array' ? 'list' : s.additionalProperties ? 'map' : undefined;
  for (const rule of (s['x-kubernetes-validations'] as Array<Record<string, string>> | undefined) ?? []) out.push(...ruleRefusals(rule, path, holds));
}

// A CEL rule is not evaluated here: it may refuse wherever it sits, with its message.
function ruleRefusals(rule: Record<string, string>, path: string, holds: Refusal['holds']): Refusal[] {
  const field = rule.fieldPath ? `${path}${rule.fieldPath}` : path;
  const out: Refusal[] = [{ field, parts: rule.messageExpression ? messageParts(rule.messageExpression) : [{ text: rule.message ?? `failed rule: ${rule.rule}` }], ...(!rule.fieldPath && holds && { holds }) }];
  // matches() with an expression that is not a literal fails to evaluate on a malformed one: that
  // error names the rule's own node, whatever its fieldPath: "<RE2's reason> evaluating rule: <message>".
  if (/\.matches\((?!')/.test(rule.rule!)) out.push({ field: path, parts: [{ any: true }, { text: ` evaluating rule: ${rule.message ?? rule.rule}` }], ...(holds && { holds }) });
  return out;
}

/** A CEL string expression ('a' + x + (c ? 'b' : 'c')) as parts: text a, anything, one of b or c. */
function messageParts(expr: string): Part[] {
  const terms: Array<{ code: string; literals: string[] }> = [{ code: '', literals: [] }];
  let depth = 0;
  for (let i = 0; i < expr.length; i++) {
    const c = expr[i]!;
    const t = terms.at(-1)!;
    if (c === "'" || c === '"') {
      let lit = '';
      let j = i + 1;
      for (; j < expr.length && expr[j] !== c; j++) lit += expr[j] === '\\' ? expr[++j] : expr[j];
      t.code += `\u0000${t.literals.length}\u0000`;
      t.literals.push(lit);
      i = j;
    } else if (c === '+' && depth === 0) terms.push({ code: '', literals: [] });
    else {
      if (c === '(' || c === '[') depth++;
      if (c === ')' || c === ']') depth--;
      t.code += c;
    }
  }
  return terms.map(({ code, literals }): Part => {
    const bare = code.trim();
    if (bare === '\u00000\u0000') return { text: literals[0]! };
    // (cond ? 'a' : cond ? 'b' : 'c'): every result is a literal.
    const results = [...bare.matchAll(/[?:]\s*\u0000(\d+)\u0000/g)].map((m) => literals[Number(m[1])]!);
    if (/^\(.*\?.*\)$/s.test(bare) && results.length === (bare.match(/\?/g) ?? []).length + 1) return { oneOf: results };
    return { any: true };
  });
}

/** Whether one of zod's `path: message` problems names `path` exactly and says `said`. */
export function zodNames(problems: string[], path: string, said: string): boolean {
  return problems.some((e) => {
    const at = e.indexOf(': ');
    return at > 0 && dotted(e.slice(0, at)) === dotted(path) && e.slice(at + 2).includes(said);
  });
}
