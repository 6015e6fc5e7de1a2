// core/v1 NodeSelector semantics (terms ORed, requirements ANDed; matchFields only metadata.name),
// as the scheduler applies them. Pure: the maintenance's node selection and its unit tests use it.
import type { NodeSelector, NodeSelectorRequirement } from './node-maintenance.js';

export interface NodeFactsForSelector {
  name: string;
  labels: Record<string, string>;
}

function requirementMatches(r: NodeSelectorRequirement, value: string | undefined): boolean {
  const vals = r.values ?? [];
  switch (r.operator) {
    case 'In':
      return value !== undefined && vals.includes(value);
    case 'NotIn':
      return value === undefined || !vals.includes(value);
    case 'Exists':
      return value !== undefined;
    case 'DoesNotExist':
      return value === undefined;
    case 'Gt':
    case 'Lt': {
      // Kubernetes: both sides must parse as integers, else no match.
      if (value === undefined || vals.length !== 1 || !/^-?\d+$/.test(value) || !/^-?\d+$/.test(vals[0]!)) return false;
      const a = BigInt(value);
      const b = BigInt(vals[0]!);
      return r.operator === 'Gt' ? a > b : a < b;
    }
  }
}

/** Whether the node matches: some term whose every requirement holds. An empty term matches nothing. */
export function matchesNodeSelector(sel: NodeSelector, node: NodeFactsForSelector): boolean {
  return sel.nodeSelectorTerms.some((t) => {
    const exprs = t.matchExpressions ?? [];
    const fields = t.matchFields ?? [];
    if (!exprs.length && !fields.length) return false;
    return (
      exprs.every((r) => requirementMatches(r, Object.prototype.hasOwnProperty.call(node.labels, r.key) ? node.labels[r.key] : undefined)) &&
      fields.every((r) => r.key === 'metadata.name' && requirementMatches(r, node.name))
    );
  });
}
