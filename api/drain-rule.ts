// DrainRule (slipway.dev/v1alpha1, cluster-scoped): how pods are drained. Modelled on Cluster API's
// MachineDrainRule: behavior Drain (with an order), Skip or WaitCompleted; node and pod selectors
// ORed between entries, ANDed within one. When several rules match a pod, the first by name wins.
import { z } from 'zod';
import { LabelSelector, selectorErrors } from './label-selector.js';

export const DrainBehavior = z.enum(['Drain', 'Skip', 'WaitCompleted']);
export type DrainBehavior = z.infer<typeof DrainBehavior>;

export const DrainRuleNodeSelector = z
  .object({ selector: LabelSelector.optional() })
  .meta({ 'x-kubernetes-validations': [{ rule: 'has(self.selector)', message: 'a nodes entry needs a selector' }] });

export const DrainRulePodSelector = z
  .object({ selector: LabelSelector.optional(), namespaceSelector: LabelSelector.optional() })
  .meta({
    'x-kubernetes-validations': [
      { rule: 'has(self.selector) || has(self.namespaceSelector)', message: 'a pods entry needs a selector or a namespaceSelector' },
    ],
  });

const unique = (field: string) => ({ rule: 'self.all(x, self.exists_one(y, x == y))', message: `entries in ${field} must be unique` });

export const DrainRuleSpec = z
  .object({
    drain: z
      .object({
        behavior: DrainBehavior,
        /** Pods with a lower order are drained first; the next order starts once they have left. Only with Drain. */
        order: z.int32().optional(),
      })
      .meta({
        'x-kubernetes-validations': [{ rule: "!has(self.order) || self.behavior == 'Drain'", message: 'order is allowed only with behavior Drain' }],
      }),
    nodes: z.array(DrainRuleNodeSelector).min(1).max(32).optional().meta({ 'x-kubernetes-validations': [unique('nodes')] }),
    pods: z.array(DrainRulePodSelector).min(1).max(32).optional().meta({ 'x-kubernetes-validations': [unique('pods')] }),
  })
  .superRefine((spec, ctx) => {
    if (spec.drain.order !== undefined && spec.drain.behavior !== 'Drain') {
      ctx.addIssue({ code: 'custom', path: ['drain', 'order'], message: 'order is allowed only with behavior Drain' });
    }
    for (const [field, list] of [['nodes', spec.nodes], ['pods', spec.pods]] as const) {
      const seen = new Set<string>();
      (list ?? []).forEach((entry, i) => {
        const key = canonical(entry);
        if (seen.has(key)) ctx.addIssue({ code: 'custom', path: [field, i], message: `entries in ${field} must be unique` });
        seen.add(key);
        if (field === 'nodes' && !('selector' in entry && entry.selector)) {
          ctx.addIssue({ code: 'custom', path: [field, i], message: 'a nodes entry needs a selector' });
        }
        if (field === 'pods' && !Object.values(entry).some(Boolean)) {
          ctx.addIssue({ code: 'custom', path: [field, i], message: 'a pods entry needs a selector or a namespaceSelector' });
        }
        for (const [k, sel] of Object.entries(entry)) {
          for (const e of selectorErrors(sel as LabelSelector)) ctx.addIssue({ code: 'custom', path: [field, i, k], message: e });
        }
      });
    }
  });
export type DrainRuleSpec = z.infer<typeof DrainRuleSpec>;

/** JSON with sorted keys, so entries that differ only in key order count as duplicates (as in CEL). */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

export const DRAIN_RULE = { group: 'slipway.dev', version: 'v1alpha1', kind: 'DrainRule', plural: 'drainrules', singular: 'drainrule' } as const;

export interface DrainRule {
  name: string;
  spec: DrainRuleSpec;
}

/** Parses one DrainRule object; the error names the rule and every problem, for status and events. */
export function parseDrainRule(obj: { metadata?: { name?: string }; spec?: unknown }): { rule?: DrainRule; error?: string } {
  const name = obj.metadata?.name ?? '(unnamed)';
  const r = DrainRuleSpec.safeParse(obj.spec);
  if (r.success) return { rule: { name, spec: r.data } };
  const problems = r.error.issues.map((i) => `${['spec', ...i.path].join('.')}: ${i.message}`);
  return { error: `DrainRule ${name} is invalid: ${problems.join('; ')}` };
}
