// The zod half of the admission corpora (the apiserver half: test/integration/admission-*.test.ts):
// every bad DrainRule and CycleNodeRequest is refused naming its field, every valid edge case is
// accepted as written, and the rules that apply to every pod are the ones admission warns about.
import { issueMessages } from '../../api/admission.js';
import { CycleNodeRequestSpec } from '../../api/cycle-node-request.js';
import { appliesToEveryPod, DrainRuleSpec, everyPodWarning, validateDrainRule } from '../../api/drain-rule.js';
import { zodNames } from '../support/admission-paths.js';
import { BAD_CYCLE_REQUESTS, VALID_CYCLE_REQUESTS } from '../support/bad-cycle-requests.js';
import { BAD_DRAIN_RULES, EVERY_POD_CASES, VALID_DRAIN_RULES, type RefusedCase } from '../support/bad-drain-rules.js';

const zodMessage = (c: RefusedCase) => (typeof c.message === 'string' ? c.message : c.message.zod);

describe('DrainRule corpus, zod side (validateDrainRule)', () => {
  test.each(BAD_DRAIN_RULES.map((c) => [c.name, c] as const))('refuses %s, naming the rule and the exact field', (_name, c) => {
    const { rule, errors } = validateDrainRule({ metadata: { name: 'r1' }, spec: c.spec });
    expect(rule).toBeUndefined();
    const named = errors.filter((e) => e.startsWith('DrainRule r1: ')).map((e) => e.slice('DrainRule r1: '.length));
    expect([c.field, zodNames(named, c.field, zodMessage(c)), errors]).toEqual([c.field, true, errors]);
  });

  test.each(VALID_DRAIN_RULES.map((c) => [c.name, c] as const))('accepts %s as written', (_name, c) => {
    expect(validateDrainRule({ metadata: { name: 'r1' }, spec: c.spec })).toEqual({ rule: { name: 'r1', spec: c.spec }, errors: [] });
  });

  test.each(EVERY_POD_CASES.map((c) => [c.name, c] as const))('%s: applies to every pod exactly when admission warns', (_name, c) => {
    expect(DrainRuleSpec.safeParse(c.spec).success).toBe(true);
    expect(appliesToEveryPod(DrainRuleSpec.parse(c.spec))).toBe(c.warns);
  });

  test('the warning says what the behavior makes of a rule without a selector', () => {
    expect(everyPodWarning('skip-all', 'Skip')).toBe('DrainRule skip-all has no selector: it applies to every pod on every node, so every drain skips every pod and evicts nothing');
    expect(everyPodWarning('w', 'WaitCompleted')).toContain('every drain waits for every pod to complete');
    expect(everyPodWarning('a', 'Drain')).toContain('overrides every DrainRule whose name sorts after it');
  });
});

describe('CycleNodeRequest corpus, zod side (CycleNodeRequestSpec, as the bridge and resolveCycle use it)', () => {
  test.each(BAD_CYCLE_REQUESTS.map((c) => [c.name, c] as const))('refuses %s, naming the exact field', (_name, c) => {
    const r = CycleNodeRequestSpec.safeParse(c.spec);
    expect(r.success).toBe(false);
    const errors = issueMessages(r.error!);
    expect([c.field, zodNames(errors, c.field, zodMessage(c)), errors]).toEqual([c.field, true, errors]);
  });

  test.each(VALID_CYCLE_REQUESTS.map((c) => [c.name, c] as const))('accepts %s', (_name, c) => {
    const r = CycleNodeRequestSpec.safeParse(c.spec);
    expect(r.success ? [] : issueMessages(r.error)).toEqual([]);
  });
});
