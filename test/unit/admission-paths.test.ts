// #24.10: every admission refusal names the exact field path, with the index, for every kind. The
// bad-input corpus of each kind (test/support/bad-*.ts) gives each case's exact path; here zod must
// name it and the generated CRD must have the check that names it (test/support/admission-paths.ts
// works out where the apiserver reports each check); the bad-input tests assert the same paths
// against the real apiserver.
import type { z } from 'zod';
import { fieldPath } from '../../api/admission.js';
import { CYCLE_NODE_REQUEST, CycleNodeRequestSpec } from '../../api/cycle-node-request.js';
import { DRAIN_RULE, DrainRuleSpec } from '../../api/drain-rule.js';
import { EVACUATION, EvacuationSpec } from '../../api/evacuation.js';
import { NODE_DISRUPTION_BUDGET, NodeDisruptionBudgetSpec } from '../../api/node-disruption-budget.js';
import { NODE_GROUP, NodeGroupSpec } from '../../api/node-group-kind.js';
import { NODE_MAINTENANCE, NodeMaintenanceSpec } from '../../api/node-maintenance.js';
import { crdNames, dotted, namesPath, segments } from '../support/admission-paths.js';
import { BAD_CYCLE_REQUESTS } from '../support/bad-cycle-requests.js';
import { BAD_DISRUPTION_BUDGETS } from '../support/bad-disruption-budgets.js';
import { BAD_DRAIN_RULES, type RefusedCase } from '../support/bad-drain-rules.js';
import { BAD_EVACUATIONS } from '../support/bad-evacuations.js';
import { BAD_NODE_GROUPS } from '../support/bad-node-groups.js';
import { BAD_NODE_MAINTENANCES } from '../support/bad-node-maintenances.js';

const CORPORA: Array<{ kind: string; cases: RefusedCase[]; zod: z.ZodType }> = [
  { kind: CYCLE_NODE_REQUEST.kind, cases: BAD_CYCLE_REQUESTS, zod: CycleNodeRequestSpec },
  { kind: DRAIN_RULE.kind, cases: BAD_DRAIN_RULES, zod: DrainRuleSpec },
  { kind: NODE_MAINTENANCE.kind, cases: BAD_NODE_MAINTENANCES, zod: NodeMaintenanceSpec },
  { kind: NODE_DISRUPTION_BUDGET.kind, cases: BAD_DISRUPTION_BUDGETS, zod: NodeDisruptionBudgetSpec },
  { kind: NODE_GROUP.kind, cases: BAD_NODE_GROUPS, zod: NodeGroupSpec },
  { kind: EVACUATION.kind, cases: BAD_EVACUATIONS, zod: EvacuationSpec },
];
const apiserverWords = (c: RefusedCase) => (typeof c.message === 'string' ? c.message : c.message.apiserver);

describe('#24.10 every admission refusal names the exact field path', () => {
  describe.each(CORPORA.map((k) => [k.kind, k] as const))('%s', (_kind, k) => {
    test.each(k.cases.map((c) => [c.name, c] as const))('%s: the CRD names it', (_name, c) => {
      const { names, refusals } = crdNames(k.kind, c.spec, c.field, apiserverWords(c));
      expect([c.field, names, names ? [] : refusals.map((r) => `${r.field}: ${JSON.stringify(r.parts)}`)]).toEqual([c.field, true, []]);
    });

    test.each(k.cases.map((c) => [c.name, c] as const))('%s: zod names it', (_name, c) => {
      const r = k.zod.safeParse(c.spec);
      const paths = r.success ? [] : r.error.issues.map((i) => dotted(fieldPath(i.path)));
      expect([c.field, paths]).toEqual([c.field, expect.arrayContaining([dotted(c.field)])]);
    });
  });

  test('a list rule names the entry from the list\'s name on; a map rule quotes the key', () => {
    expect(namesPath('spec.drainPlan', 'drainPlan[1]: entries must be ordered', 'spec.drainPlan[1]')).toBe(true);
    expect(namesPath('spec.drainPlan', 'entries must be ordered', 'spec.drainPlan[1]')).toBe(false);
    expect(namesPath('spec.drainPlan', 'drainPlan[0]: entries must be ordered', 'spec.drainPlan[1]')).toBe(false);
    expect(namesPath('spec.template.healthChecks', 'missing closing ]: `[` evaluating rule: healthChecks[1].regexMatch: a regular expression', 'spec.template.healthChecks[1].regexMatch')).toBe(true);
    expect(namesPath('spec.selector.matchLabels', 'label key "bad key!" is not valid', 'spec.selector.matchLabels[bad key!]')).toBe(true);
    expect(namesPath('spec.selector.matchLabels.slipway.dev/node-group', 'Invalid value: "a b"', 'spec.selector.matchLabels[slipway.dev/node-group]')).toBe(true);
    expect(namesPath('spec', 'missing closing ]', 'spec.healthChecks[0].regexMatch')).toBe(false);
    expect(namesPath('spec.healthChecks', 'missing closing ]', 'spec.healthChecks[0].regexMatch')).toBe(false);
    expect(segments('spec.pods[0].selector.matchLabels[a/b.c]')).toEqual(['spec', 'pods', 0, 'selector', 'matchLabels', 'a/b.c']);
  });
});
