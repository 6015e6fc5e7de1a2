// An invalid DrainRule holds only the drains it could affect.
import { invalidRuleCouldAffect, looseMatch } from '../../activities/drain/rule-reach.js';

const node = { 'slipway.dev/node-group': 'workers' };
const pods = [{ namespace: 'app', labels: { app: 'web' } }];
const noNs = () => undefined;

describe('looseMatch', () => {
  test('evaluates selectors whose keys or values are malformed, as the apiserver would compare strings', () => {
    expect(looseMatch({ matchLabels: { 'bad key!': 'x' } }, { app: 'web' })).toBe(false);
    expect(looseMatch({ matchExpressions: [{ key: 'bad key!', operator: 'DoesNotExist' }] }, { app: 'web' })).toBe(true);
    expect(looseMatch({ matchExpressions: [{ key: 'app', operator: 'In', values: ['web'] }] }, { app: 'web' })).toBe(true);
  });
  test('cannot tell for an unknown operator or a wrong shape', () => {
    expect(looseMatch({ matchExpressions: [{ key: 'app', operator: 'Matches', values: ['w.*'] }] }, {})).toBeUndefined();
    expect(looseMatch({ matchLabels: { app: 3 } }, {})).toBeUndefined();
    expect(looseMatch('app=web', {})).toBeUndefined();
  });
});

describe('invalidRuleCouldAffect', () => {
  test('a rule for other nodes cannot affect this drain', () => {
    const spec = { drain: { behavior: 'Drain', order: 2 ** 31 }, nodes: [{ selector: { matchLabels: { 'slipway.dev/node-group': 'db' } } }] };
    expect(invalidRuleCouldAffect(spec, node, pods, noNs)).toBe(false);
  });
  test('a rule whose pod selectors match no pod on the node cannot affect it', () => {
    const spec = { drain: { behavior: 'Skip' }, pods: [{ selector: { matchLabels: { 'bad key!': 'x' } } }] };
    expect(invalidRuleCouldAffect(spec, node, pods, noNs)).toBe(false);
  });
  test('a rule that matches this node and a pod on it holds the drain', () => {
    const spec = { drain: { behavior: 'Drain', order: 2 ** 31 }, pods: [{ selector: { matchLabels: { app: 'web' } } }] };
    expect(invalidRuleCouldAffect(spec, node, pods, noNs)).toBe(true);
  });
  test('a rule with no selector at all applies to every pod: it holds any drain with pods', () => {
    expect(invalidRuleCouldAffect({ drain: { behavior: 'Bogus' } }, node, pods, noNs)).toBe(true);
    expect(invalidRuleCouldAffect({ drain: { behavior: 'Bogus' } }, node, [], noNs)).toBe(false);
  });
  test('anything that cannot be evaluated counts as "could" (an unknown operator, unknown namespace labels)', () => {
    const unknownOp = { drain: { behavior: 'Skip' }, nodes: [{ selector: { matchExpressions: [{ key: 'x', operator: 'Like' }] } }] };
    expect(invalidRuleCouldAffect(unknownOp, node, pods, noNs)).toBe(true);
    const byNs = { drain: { behavior: 'Skip' }, pods: [{ namespaceSelector: { matchLabels: { team: 'a' } } }], extra: 1 };
    expect(invalidRuleCouldAffect(byNs, node, pods, noNs)).toBe(true);
    expect(invalidRuleCouldAffect(byNs, node, pods, () => ({ team: 'b' }))).toBe(false);
    expect(invalidRuleCouldAffect(null, node, pods, noNs)).toBe(true);
  });
});
