// One corpus of DrainRule specs, tested against zod (test/unit/admission-corpus.test.ts) and
// against the apiserver (test/bad-input/drain-rule.test.ts), so the drain-time check and
// admission cannot drift apart: every invalid spec is refused by both, naming the same field with
// the same words; every valid edge case is accepted by both.

/** A refused object: the field both name (as the apiserver writes it) and a fragment both say. */
export interface RefusedCase {
  name: string;
  spec: unknown;
  field: string;
  /** Said by both, or (where the wording cannot be the same, e.g. a missing field) by each. */
  message: string | { zod: string; apiserver: string };
}

const long = (n: number, c = 'a') => c.repeat(n);
const labels = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, 'v']));
const sel = (selector: unknown) => [{ selector }];
const expr = (e: Record<string, unknown>) => sel({ matchExpressions: [e] });
const KEY = 'is not valid: an optional DNS subdomain prefix of at most 253 characters';

export const BAD_DRAIN_RULES: RefusedCase[] = [
  // Label keys in matchLabels (a map: the apiserver names the map, zod the key).
  { name: 'a key with a space and "!"', spec: { drain: { behavior: 'Skip' }, pods: sel({ matchLabels: { 'bad key!': 'x' } }) }, field: `spec.pods[0].selector.matchLabels[bad key!]`, message: `label key "bad key!" ${KEY}` },
  { name: 'a key with two slashes', spec: { drain: { behavior: 'Drain' }, nodes: sel({ matchLabels: { 'a/b/c': 'x' } }) }, field: `spec.nodes[0].selector.matchLabels[a/b/c]`, message: `label key "a/b/c" ${KEY}` },
  { name: 'a key with an upper-case prefix', spec: { drain: { behavior: 'Drain' }, pods: sel({ matchLabels: { 'Example.com/app': 'x' } }) }, field: `spec.pods[0].selector.matchLabels[Example.com/app]`, message: `label key "Example.com/app" ${KEY}` },
  { name: 'a key with an empty prefix', spec: { drain: { behavior: 'Drain' }, pods: sel({ matchLabels: { '/app': 'x' } }) }, field: `spec.pods[0].selector.matchLabels[/app]`, message: `label key "/app" ${KEY}` },
  { name: 'a key whose name has 64 characters', spec: { drain: { behavior: 'Drain' }, pods: sel({ matchLabels: { [long(64)]: 'x' } }) }, field: `spec.pods[0].selector.matchLabels[${long(64)}]`, message: `label key "${long(64)}" ${KEY}` },
  { name: 'a key whose prefix has 254 characters', spec: { drain: { behavior: 'Drain' }, pods: sel({ matchLabels: { [`${long(254)}/x`]: 'x' } }) }, field: `spec.pods[0].selector.matchLabels[${long(254)}/x]`, message: `label key "${long(254)}/x" ${KEY}` },
  { name: 'a key ending in "-"', spec: { drain: { behavior: 'Drain' }, pods: [{ namespaceSelector: { matchLabels: { 'team-': 'x' } } }] }, field: `spec.pods[0].namespaceSelector.matchLabels[team-]`, message: `label key "team-" ${KEY}` },
  { name: 'an empty key', spec: { drain: { behavior: 'Drain' }, pods: sel({ matchLabels: { '': 'x' } }) }, field: `spec.pods[0].selector.matchLabels[]`, message: `label key "" ${KEY}` },
  // Label values in matchLabels.
  { name: 'a value starting with "-"', spec: { drain: { behavior: 'Drain' }, pods: sel({ matchLabels: { app: '-x' } }) }, field: 'spec.pods[0].selector.matchLabels.app', message: '"-x"' },
  { name: 'a value with a space', spec: { drain: { behavior: 'Drain' }, nodes: sel({ matchLabels: { pool: 'a b' } }) }, field: 'spec.nodes[0].selector.matchLabels.pool', message: '"a b"' },
  { name: 'a value of 64 characters', spec: { drain: { behavior: 'Drain' }, pods: sel({ matchLabels: { app: long(64) } }) }, field: 'spec.pods[0].selector.matchLabels.app', message: { zod: `label value "${long(64)}" is not valid`, apiserver: 'may not be more than 63' } },
  // matchExpressions: keys, values, operators.
  { name: 'an expression key with a space', spec: { drain: { behavior: 'Drain' }, nodes: expr({ key: 'bad key!', operator: 'Exists' }) }, field: 'spec.nodes[0].selector.matchExpressions[0].key', message: '"bad key!"' },
  { name: 'an expression key whose prefix has 254 characters', spec: { drain: { behavior: 'Drain' }, pods: expr({ key: `${long(254)}/x`, operator: 'Exists' }) }, field: 'spec.pods[0].selector.matchExpressions[0].key', message: `label key "${long(254)}/x" ${KEY}` },
  { name: 'an expression value with "!"', spec: { drain: { behavior: 'Drain' }, pods: expr({ key: 'app', operator: 'In', values: ['ok', 'no!'] }) }, field: 'spec.pods[0].selector.matchExpressions[0].values[1]', message: '"no!"' },
  { name: 'an unknown operator', spec: { drain: { behavior: 'Drain' }, pods: expr({ key: 'app', operator: 'Like', values: ['x'] }) }, field: 'spec.pods[0].selector.matchExpressions[0].operator', message: 'Unsupported value: "Like": supported values: "In", "NotIn", "Exists", "DoesNotExist"' },
  { name: 'a lower-case operator', spec: { drain: { behavior: 'Drain' }, pods: expr({ key: 'app', operator: 'exists' }) }, field: 'spec.pods[0].selector.matchExpressions[0].operator', message: 'Unsupported value: "exists"' },
  { name: 'In without values', spec: { drain: { behavior: 'Drain' }, pods: expr({ key: 'app', operator: 'In' }) }, field: 'spec.pods[0].selector.matchExpressions[0].values', message: 'operator In on "app" needs values' },
  { name: 'NotIn with an empty list', spec: { drain: { behavior: 'Drain' }, nodes: expr({ key: 'app', operator: 'NotIn', values: [] }) }, field: 'spec.nodes[0].selector.matchExpressions[0].values', message: 'operator NotIn on "app" needs values' },
  { name: 'Exists with values', spec: { drain: { behavior: 'Drain' }, nodes: expr({ key: 'app', operator: 'Exists', values: ['x'] }) }, field: 'spec.nodes[0].selector.matchExpressions[0].values', message: 'operator Exists on "app" takes no values' },
  { name: 'DoesNotExist with values', spec: { drain: { behavior: 'Drain' }, pods: [{ namespaceSelector: { matchExpressions: [{ key: 'app', operator: 'DoesNotExist', values: ['x'] }] } }] }, field: 'spec.pods[0].namespaceSelector.matchExpressions[0].values', message: 'operator DoesNotExist on "app" takes no values' },
  { name: 'an expression without an operator', spec: { drain: { behavior: 'Drain' }, pods: expr({ key: 'app' }) }, field: 'spec.pods[0].selector.matchExpressions[0].operator', message: 'Required value' },
  // drain: behavior and order.
  { name: 'order 2^31', spec: { drain: { behavior: 'Drain', order: 2 ** 31 } }, field: 'spec.drain.order', message: '2147483647' },
  { name: 'order -2^31 - 1', spec: { drain: { behavior: 'Drain', order: -(2 ** 31) - 1 } }, field: 'spec.drain.order', message: '-2147483648' },
  { name: 'a fractional order', spec: { drain: { behavior: 'Drain', order: 1.5 } }, field: 'spec.drain.order', message: { zod: 'expected int', apiserver: 'must be of type integer' } },
  { name: 'order with Skip', spec: { drain: { behavior: 'Skip', order: 1 } }, field: 'spec.drain.order', message: 'order is allowed only with behavior Drain' },
  { name: 'order with WaitCompleted', spec: { drain: { behavior: 'WaitCompleted', order: 0 } }, field: 'spec.drain.order', message: 'order is allowed only with behavior Drain' },
  { name: 'an unknown behavior', spec: { drain: { behavior: 'Evict' } }, field: 'spec.drain.behavior', message: 'Unsupported value: "Evict": supported values: "Drain", "Skip", "WaitCompleted"' },
  { name: 'no behavior', spec: { drain: {} }, field: 'spec.drain.behavior', message: 'Required value' },
  { name: 'no drain', spec: { pods: sel({ matchLabels: { app: 'x' } }) }, field: 'spec.drain', message: { zod: 'expected object', apiserver: 'Required value' } },
  // Entries: count, emptiness, uniqueness, sizes.
  { name: 'an empty nodes list', spec: { drain: { behavior: 'Drain' }, nodes: [] }, field: 'spec.nodes', message: '1 items' },
  { name: '33 pods entries', spec: { drain: { behavior: 'Drain' }, pods: Array.from({ length: 33 }, (_, i) => ({ selector: { matchLabels: { app: `a${i}` } } })) }, field: 'spec.pods', message: '32 items' },
  { name: 'a nodes entry without a selector', spec: { drain: { behavior: 'Drain' }, nodes: [{}] }, field: 'spec.nodes[0]', message: 'a nodes entry needs a selector' },
  { name: 'an empty pods entry', spec: { drain: { behavior: 'Drain' }, pods: [{}] }, field: 'spec.pods[0]', message: 'a pods entry needs a selector or a namespaceSelector' },
  { name: 'duplicate pods entries', spec: { drain: { behavior: 'Drain' }, pods: [...sel({ matchLabels: { app: 'db' } }), ...sel({ matchLabels: { app: 'web' } }), ...sel({ matchLabels: { app: 'db' } })] }, field: 'spec.pods[2]', message: 'entries in pods must be unique' },
  { name: 'duplicate nodes entries', spec: { drain: { behavior: 'Drain' }, nodes: [...sel({ matchLabels: { pool: 'a' } }), ...sel({ matchLabels: { pool: 'a' } })] }, field: 'spec.nodes[1]', message: 'entries in nodes must be unique' },
  { name: '65 matchLabels', spec: { drain: { behavior: 'Drain' }, pods: sel({ matchLabels: labels(65) }) }, field: 'spec.pods[0].selector.matchLabels', message: 'must have at most 64 items' },
  { name: '65 matchExpressions', spec: { drain: { behavior: 'Drain' }, pods: sel({ matchExpressions: Array.from({ length: 65 }, (_, i) => ({ key: `k${i}`, operator: 'Exists' })) }) }, field: 'spec.pods[0].selector.matchExpressions', message: '64 items' },
];

/** Accepted by both, exactly as written. */
export const VALID_DRAIN_RULES: Array<{ name: string; spec: unknown }> = [
  { name: 'order -2^31', spec: { drain: { behavior: 'Drain', order: -(2 ** 31) }, pods: sel({ matchLabels: { app: 'lo' } }) } },
  { name: 'order 2^31 - 1', spec: { drain: { behavior: 'Drain', order: 2 ** 31 - 1 }, pods: sel({ matchLabels: { app: 'hi' } }) } },
  { name: 'a prefixed key, a 63-character name and value, an empty value', spec: { drain: { behavior: 'Skip' }, pods: sel({ matchLabels: { 'example.com/app': 'x', [long(63)]: long(63, 'b'), 'A_b.c-D': '' } }) } },
  { name: 'a 253-character prefix', spec: { drain: { behavior: 'Drain' }, nodes: sel({ matchLabels: { [`${long(61)}.${long(61, 'b')}.${long(61, 'c')}.${long(61, 'd')}.${long(5, 'e')}/x`]: 'y' } }) } },
  { name: 'every operator', spec: { drain: { behavior: 'WaitCompleted' }, pods: sel({ matchExpressions: [{ key: 'a', operator: 'In', values: ['1', '2'] }, { key: 'b', operator: 'NotIn', values: ['3'] }, { key: 'c', operator: 'Exists' }, { key: 'kubernetes.io/d', operator: 'DoesNotExist', values: [] }] }) } },
  { name: 'a pods entry with only a namespaceSelector, and nodes', spec: { drain: { behavior: 'Drain', order: 0 }, nodes: sel({ matchLabels: { pool: 'db' } }), pods: [{ namespaceSelector: { matchLabels: { team: 'data' } } }] } },
  { name: '64 matchLabels, 32 pods entries', spec: { drain: { behavior: 'Drain' }, pods: [{ selector: { matchLabels: labels(64) } }, ...Array.from({ length: 31 }, (_, i) => ({ selector: { matchLabels: { app: `a${i}` } } }))] } },
];

/** Valid rules, and whether admission warns that they apply to every pod (appliesToEveryPod). */
export const EVERY_POD_CASES: Array<{ name: string; spec: { drain: { behavior: 'Drain' | 'Skip' | 'WaitCompleted' }; nodes?: unknown[]; pods?: unknown[] }; warns: boolean }> = [
  { name: 'no nodes and no pods', spec: { drain: { behavior: 'Skip' } }, warns: true },
  { name: 'only an empty nodes selector', spec: { drain: { behavior: 'WaitCompleted' }, nodes: sel({}) }, warns: true },
  { name: 'an empty pods selector', spec: { drain: { behavior: 'Skip' }, pods: sel({ matchLabels: {} }) }, warns: true },
  { name: 'empty pods and namespace selectors, among narrow ones', spec: { drain: { behavior: 'Drain' }, pods: [...sel({ matchLabels: { app: 'x' } }), { selector: {}, namespaceSelector: { matchExpressions: [] } }] }, warns: true },
  { name: 'a pods selector', spec: { drain: { behavior: 'Skip' }, pods: sel({ matchLabels: { app: 'x' } }) }, warns: false },
  { name: 'a namespace selector', spec: { drain: { behavior: 'Skip' }, pods: [{ namespaceSelector: { matchLabels: { team: 'x' } } }] }, warns: false },
  { name: 'a nodes selector only', spec: { drain: { behavior: 'Skip' }, nodes: sel({ matchExpressions: [{ key: 'pool', operator: 'Exists' }] }) }, warns: false },
];
