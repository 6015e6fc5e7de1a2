// Whether a DrainRule that failed validation could still decide about a pod on this node. A bad rule
// stored before admission checked it (or edited past an older CRD) must hold only the drains it
// could affect: a rule whose node selector cannot match this node, or whose pod selectors match no
// pod on it, leaves the drain alone. Evaluated loosely on the raw object; anything that cannot be
// evaluated (a malformed selector, an unknown operator) counts as "could", so a drain never goes on
// past a rule that might have told it to skip or to wait.

interface PodLabels {
  namespace: string;
  labels: Record<string, string>;
}

type Loose = boolean | undefined; // undefined: cannot tell

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A label selector evaluated on raw JSON; undefined when its shape does not allow a verdict. */
export function looseMatch(sel: unknown, labels: Record<string, string> | undefined): Loose {
  if (sel === undefined || sel === null) return true;
  if (!isRecord(sel)) return undefined;
  const l = labels ?? {};
  const { matchLabels, matchExpressions } = sel;
  if (matchLabels !== undefined && !isRecord(matchLabels)) return undefined;
  if (matchExpressions !== undefined && !Array.isArray(matchExpressions)) return undefined;
  let result: Loose = true;
  for (const [k, v] of Object.entries(matchLabels ?? {})) {
    if (typeof v !== 'string') return undefined;
    if (l[k] !== v) result = false;
  }
  for (const r of (matchExpressions ?? []) as unknown[]) {
    if (!isRecord(r) || typeof r.key !== 'string') return undefined;
    const values = r.values ?? [];
    if (!Array.isArray(values) || values.some((v) => typeof v !== 'string')) return undefined;
    const has = Object.prototype.hasOwnProperty.call(l, r.key);
    const inValues = has && (values as string[]).includes(l[r.key]!);
    const op = r.operator;
    const ok = op === 'In' ? inValues : op === 'NotIn' ? !inValues : op === 'Exists' ? has : op === 'DoesNotExist' ? !has : undefined;
    if (ok === undefined) return undefined;
    if (!ok) result = false;
  }
  return result;
}

/** False only when the rule provably cannot match this node or any of these pods. */
export function invalidRuleCouldAffect(
  spec: unknown,
  nodeLabels: Record<string, string>,
  pods: PodLabels[],
  namespaceLabels: (ns: string) => Record<string, string> | undefined,
): boolean {
  if (!isRecord(spec)) return true;
  const nodes = spec.nodes;
  if (Array.isArray(nodes) && nodes.length > 0) {
    const verdicts = nodes.map((e) => (isRecord(e) ? looseMatch(e.selector, nodeLabels) : undefined));
    if (verdicts.every((v) => v === false)) return false;
  } else if (nodes !== undefined && !Array.isArray(nodes)) return true;
  if (pods.length === 0) return false; // nothing on the node for it to decide about (re-checked on every pass)
  const entries = spec.pods;
  if (entries === undefined || (Array.isArray(entries) && entries.length === 0)) return true;
  if (!Array.isArray(entries)) return true;
  return pods.some((p) =>
    entries.some((e) => {
      if (!isRecord(e)) return true;
      const bySelector = looseMatch(e.selector, p.labels);
      const ns = namespaceLabels(p.namespace);
      const byNamespace = e.namespaceSelector === undefined ? true : ns === undefined ? undefined : looseMatch(e.namespaceSelector, ns);
      return bySelector !== false && byNamespace !== false;
    }),
  );
}
