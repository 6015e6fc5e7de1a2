// #27.1 spec.rollout at admission, the parts the corpus (test/support/bad-node-maintenances.ts) does
// not cover: maxUnavailable as a number of nodes, the transition rule in the workflow's words, and
// the CRD's one CEL rule for both forms of maxUnavailable.
import { crdManifest, type JsonSchema } from '../../api/crd.js';
import { CRDS } from '../../api/crds.js';
import { NodeMaintenanceSpec, specTransitionErrors } from '../../api/node-maintenance.js';
import { isMaxUnavailable, MAX_UNAVAILABLE_MESSAGE, maxUnavailableOf } from '../../api/rollout.js';
import { nm, ROLLOUT } from '../support/bad-node-maintenances.js';

const parse = (spec: unknown) => NodeMaintenanceSpec.parse(spec);

describe('#27.1 maxUnavailableOf: spec.rollout.maxUnavailable as a number of nodes', () => {
  test.each([
    [2, 10, 2],
    ['3', 10, 3],
    [5, 3, 5], // a count above the selection is not cut: the rollout simply never waits on it
    ['25%', 10, 2], // rounded down
    ['25%', 3, 1], // never below 1
    ['1%', 50, 1],
    ['50%', 7, 3],
    ['100%', 7, 7],
    ['100%', 0, 1],
  ] as const)('%p of %p selected nodes is %p', (v, selected, expected) => {
    expect(maxUnavailableOf(v, selected)).toBe(expected);
  });

  test('isMaxUnavailable takes 1–100000 and 1%–100%, as numbers or digits, and nothing else', () => {
    const ok = [1, 100_000, '1', '100000', '1%', '99%', '100%'];
    const bad = [0, -1, 1.5, 100_001, '0', '0%', '101%', '1000%', 'abc', '', '25 %', '%', '01', null, true];
    expect([ok.filter((v) => !isMaxUnavailable(v)), bad.filter((v) => isMaxUnavailable(v))]).toEqual([[], []]);
  });

  test('the parsed rollout has its defaults: maxUnavailable 1, KeepCordoned, maxFailures 0', () => {
    expect(parse(nm({ rollout: { completion: { manual: true } } })).rollout).toEqual({
      maxUnavailable: 1, completion: { manual: true }, nodeTimeoutPolicy: 'KeepCordoned', maxFailures: 0,
    });
  });
});

describe('#27.1 spec.rollout is set while Idle only (specTransitionErrors, the CRD transition rule in the workflow\'s words)', () => {
  const at = (stage: string, over: Record<string, unknown> = {}) => parse(nm({ stage, ...over }));
  const FROZEN = 'spec.rollout cannot change once the maintenance has left Idle';

  test('added, changed or removed while Idle (even with the move out of Idle): allowed', () => {
    expect(specTransitionErrors(at('Idle'), at('Idle', { rollout: ROLLOUT }))).toEqual([]);
    expect(specTransitionErrors(at('Idle', { rollout: ROLLOUT }), at('Drain', { rollout: { ...ROLLOUT, maxUnavailable: '50%' } }))).toEqual([]);
    expect(specTransitionErrors(at('Idle', { rollout: ROLLOUT }), at('Cordon'))).toEqual([]);
  });

  test('added after Idle: refused', () => {
    expect(specTransitionErrors(at('Cordon'), at('Drain', { rollout: ROLLOUT }))).toEqual([FROZEN]);
  });

  test('changed or removed after Idle: refused; unchanged: allowed', () => {
    expect(specTransitionErrors(at('Drain', { rollout: ROLLOUT }), at('Drain', { rollout: { ...ROLLOUT, maxUnavailable: 3 } }))).toEqual([FROZEN]);
    expect(specTransitionErrors(at('Drain', { rollout: ROLLOUT }), at('Drain'))).toEqual([FROZEN]);
    expect(specTransitionErrors(at('Drain', { rollout: ROLLOUT }), at('Complete', { rollout: ROLLOUT }))).toEqual([]);
  });
});

describe('#27.1 the CRD checks maxUnavailable with one CEL rule that says what zod says', () => {
  const def = CRDS.find((d) => d.kind === 'NodeMaintenance')!;
  const spec = (crdManifest(def) as { spec: { versions: Array<{ schema: { openAPIV3Schema: JsonSchema } }> } }).spec.versions[0]!.schema.openAPIV3Schema;
  const at = (s: JsonSchema, ...keys: string[]) => keys.reduce((x, k) => (x.properties as Record<string, JsonSchema>)[k]!, s);
  const mu = at(spec, 'spec', 'rollout', 'maxUnavailable');

  test('no pattern (its refusal would quote a regular expression); a bounded length; the message names the value and the rule', () => {
    expect(mu.pattern).toBeUndefined();
    expect(mu.maxLength).toBe(7);
    const [rule] = mu['x-kubernetes-validations'] as Array<{ rule: string; messageExpression: string }>;
    expect(rule!.rule).toContain('type(self) == int ?');
    expect(rule!.messageExpression).toContain(MAX_UNAVAILABLE_MESSAGE);
  });
});
