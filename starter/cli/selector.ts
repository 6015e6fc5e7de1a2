// A label selector string checked as the apiserver parses it (k8s.io/apimachinery labels.Parse),
// before anything connects: key, !key, key=v, key==v, key!=v, key in (a,b), key notin (a,b), key>N, key<N.
import { isLabelKey, isLabelValue } from '../../api/label-selector.js';

/** Undefined when valid; otherwise what is wrong, in a few words. */
export function selectorError(sel: string): string | undefined {
  if (sel.trim() === '') return undefined;
  const parts: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of sel) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (depth < 0) return 'unbalanced ")"';
    if (ch === ',' && depth === 0) {
      parts.push(cur);
      cur = '';
    } else cur += ch;
  }
  if (depth !== 0) return 'unclosed "("';
  parts.push(cur);
  for (const raw of parts) {
    const p = raw.trim();
    const key = (k: string) => (isLabelKey(k) ? undefined : `invalid label key "${k}"`);
    const value = (v: string) => (isLabelValue(v) ? undefined : `invalid label value "${v}"`);
    let m: RegExpExecArray | null;
    if ((m = /^!\s*(\S+)$/.exec(p))) {
      const e = key(m[1]!);
      if (e) return e;
    } else if ((m = /^(\S+?)\s*(==|!=|=)\s*(\S*)$/.exec(p))) {
      const e = key(m[1]!) ?? value(m[3]!);
      if (e) return e;
    } else if ((m = /^(\S+?)\s*([<>])\s*(\S+)$/.exec(p))) {
      if (key(m[1]!)) return key(m[1]!);
      if (!/^-?[0-9]+$/.test(m[3]!)) return `"${m[3]}" is not an integer (for ${m[2]})`;
    } else if ((m = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(p))) {
      const e = key(m[1]!) ?? m[3]!.split(',').map((v) => value(v.trim())).find(Boolean);
      if (e) return e;
    } else if (/^\S+$/.test(p)) {
      const e = key(p);
      if (e) return e;
    } else return `cannot read "${p}"`;
  }
  return undefined;
}
