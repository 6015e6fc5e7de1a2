// DrainRule (slipway.dev/v1alpha1, cluster-scoped): how pods are drained. Modelled on Cluster API's
// MachineDrainRule: behavior Drain (with an order), Skip or WaitCompleted; node and pod selectors
// ORed between entries, ANDed within one. When several rules match a pod, the first by name wins.
// The zod type is the CRD's schema: whatever it refuses, admission refuses too (test/support/
// bad-drain-rules.ts is the corpus both are tested against).
import { DRAIN_RULE } from './names.js';
import { z } from 'zod';
import { celString, entryRule, issueMessages, kubeEnum, repeatsEarlier } from './admission.js';
import { isEmptySelector, LabelSelector } from './label-selector.js';
import { canonical } from './canonical.js';

export const DrainBehavior = kubeEnum(['Drain', 'Skip', 'WaitCompleted']);
export type DrainBehavior = z.infer<typeof DrainBehavior>;

export const DrainRuleNodeSelector = z
  .object({ selector: LabelSelector.optional().describe('The nodes whose drains the rule applies to (required).') })
  .meta({ 'x-kubernetes-validations': [{ rule: 'has(self.selector)', message: 'a nodes entry needs a selector' }] });

export const DrainRulePodSelector = z
  .object({
    selector: LabelSelector.optional().describe('Pods with these labels.'),
    namespaceSelector: LabelSelector.optional().describe('Pods of namespaces with these labels.'),
  })
  .meta({
    'x-kubernetes-validations': [
      { rule: 'has(self.selector) || has(self.namespaceSelector)', message: 'a pods entry needs a selector or a namespaceSelector' },
    ],
  });

const MAX_ENTRIES = 32;
const unique = (field: string) => entryRule(field, MAX_ENTRIES, repeatsEarlier(), `entries in ${field} must be unique`);

export const DrainRuleSpec = z
  .object({
    drain: z
      .object({
        behavior: DrainBehavior.describe('Drain: evict the pods (in order). Skip: leave them on the node. WaitCompleted: wait until they finish on their own.'),
        order: z.int32().optional().describe('Pods with a lower order are drained first; the next order starts once they have left. Only with Drain.'),
      })
      .meta({
        'x-kubernetes-validations': [{ rule: "!has(self.order) || self.behavior == 'Drain'", message: 'order is allowed only with behavior Drain', fieldPath: '.order' }],
      })
      .describe('What a drain does with the matched pods.'),
    nodes: z
      .array(DrainRuleNodeSelector)
      .min(1)
      .max(MAX_ENTRIES)
      .optional()
      .meta({ 'x-kubernetes-validations': [unique('nodes')] })
      .describe('The nodes the rule applies on; entries are ORed. Unset: every node.'),
    pods: z
      .array(DrainRulePodSelector)
      .min(1)
      .max(MAX_ENTRIES)
      .optional()
      .meta({ 'x-kubernetes-validations': [unique('pods')] })
      .describe('The pods the rule applies to; entries are ORed, selector and namespaceSelector of one entry ANDed. Unset: every pod.'),
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
      });
    }
  })
  .describe('Which pods, on which nodes, and what a drain does with them.');
export type DrainRuleSpec = z.infer<typeof DrainRuleSpec>;

export { DRAIN_RULE } from './names.js';

export interface DrainRule {
  name: string;
  spec: DrainRuleSpec;
}

/**
 * Validates one DrainRule object with the CRD's own zod type. Each error names the rule and the
 * field: `DrainRule r1: spec.pods[0].selector.matchLabels: label key "bad key!" is not valid: …`.
 */
export function validateDrainRule(obj: { metadata?: { name?: string }; spec?: unknown }): { rule?: DrainRule; errors: string[] } {
  const name = obj.metadata?.name ?? '(unnamed)';
  const r = DrainRuleSpec.safeParse(obj.spec);
  if (r.success) return { rule: { name, spec: r.data }, errors: [] };
  return { errors: issueMessages(r.error).map((e) => `DrainRule ${name}: ${e}`) };
}

/** validateDrainRule with every problem in one message, for status and events. */
export function parseDrainRule(obj: { metadata?: { name?: string }; spec?: unknown }): { rule?: DrainRule; error?: string } {
  const name = obj.metadata?.name ?? '(unnamed)';
  const r = DrainRuleSpec.safeParse(obj.spec);
  if (r.success) return { rule: { name, spec: r.data } };
  return { error: `DrainRule ${name} is invalid: ${issueMessages(r.error).join('; ')}` };
}

// ---- rules that select everything ----------------------------------------------------------------

/**
 * Whether the rule narrows nothing: no nodes entry (or one with an empty selector) and no pods entry
 * (or one with both selectors empty). Such a rule applies to every pod on every node; with Skip it
 * makes every drain a no-op. Admission warns (DRAIN_RULE_POLICIES); it is not refused, since a
 * cluster-wide rule can be meant.
 */
export function appliesToEveryPod(spec: Pick<DrainRuleSpec, 'nodes' | 'pods'>): boolean {
  const everyNode = !spec.nodes || spec.nodes.some((n) => isEmptySelector(n.selector));
  const everyPod = !spec.pods || spec.pods.some((p) => isEmptySelector(p.selector) && isEmptySelector(p.namespaceSelector));
  return everyNode && everyPod;
}

/** The warning for such a rule: the same text from everyPodWarning() and from the admission policy. */
export function everyPodWarning(name: string, behavior: DrainBehavior): string {
  return `DrainRule ${name} has no selector: it applies to every pod on every node${EVERY_POD_CONSEQUENCE[behavior]}`;
}
const EVERY_POD_CONSEQUENCE: Record<DrainBehavior, string> = {
  Skip: ', so every drain skips every pod and evicts nothing',
  WaitCompleted: ', so every drain waits for every pod to complete on its own and evicts nothing',
  Drain: ', and it overrides every DrainRule whose name sorts after it',
};

// The same test as appliesToEveryPod, in CEL on the admitted object.
const celEmpty = (s: string) => `(!has(${s}) || ((!has(${s}.matchLabels) || size(${s}.matchLabels) == 0) && (!has(${s}.matchExpressions) || size(${s}.matchExpressions) == 0)))`;
const CEL_EVERY_POD =
  `(!has(object.spec.nodes) || object.spec.nodes.exists(n, ${celEmpty('n.selector')})) && ` +
  `(!has(object.spec.pods) || object.spec.pods.exists(p, ${celEmpty('p.selector')} && ${celEmpty('p.namespaceSelector')}))`;

export const EVERY_POD_POLICY = `drainrule-applies-to-every-pod.${DRAIN_RULE.group}`;

/**
 * A ValidatingAdmissionPolicy and its binding (validationActions: [Warn]): creating or updating a
 * rule that applies to every pod answers with a warning (kubectl prints it; clients get a Warning
 * header). failurePolicy Ignore: a warning must never block a write.
 */
export function drainRulePolicies(): Array<Record<string, unknown>> {
  const consequence = (b: DrainBehavior) => `object.spec.drain.behavior == ${celString(b)} ? ${celString(EVERY_POD_CONSEQUENCE[b])}`;
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name: EVERY_POD_POLICY },
      spec: {
        failurePolicy: 'Ignore',
        matchConstraints: {
          resourceRules: [{ apiGroups: [DRAIN_RULE.group], apiVersions: [DRAIN_RULE.version], operations: ['CREATE', 'UPDATE'], resources: [DRAIN_RULE.plural] }],
        },
        validations: [
          {
            expression: `!(${CEL_EVERY_POD})`,
            messageExpression: `'DrainRule ' + object.metadata.name + ' has no selector: it applies to every pod on every node' + (${consequence('Skip')} : ${consequence('WaitCompleted')} : ${celString(EVERY_POD_CONSEQUENCE.Drain)})`,
            reason: 'Invalid',
          },
        ],
      },
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: EVERY_POD_POLICY },
      spec: { policyName: EVERY_POD_POLICY, validationActions: ['Warn'] },
    },
  ];
}
