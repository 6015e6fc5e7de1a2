// The CRDs generated from api/: checked-in YAML is current (the CI staleness check), the schemas
// are structural with the CEL rules in place, the converter refuses what it cannot express, and
// the same zod types validate DrainRules at drain time.
import { z } from 'zod';
import { entryRule, repeatsEarlier } from '../../api/admission.js';
import { crdManifest, structuralSchema, type CrdDefinition, type JsonSchema } from '../../api/crd.js';
import { CRDS, POLICIES } from '../../api/crds.js';
import { DrainRuleSpec, parseDrainRule, validateDrainRule } from '../../api/drain-rule.js';
import { celIsLabelKey, LABEL_KEY_PATTERN, LABEL_VALUE_PATTERN } from '../../api/label-selector.js';
import { KUSTOMIZATION_FILE, renderCrds, renderKustomization, staleCrds } from '../../api/generate-crds.js';
import { parse } from 'yaml';

type Version = { name: string; served: boolean; storage: boolean; schema: { openAPIV3Schema: JsonSchema }; subresources?: unknown; additionalPrinterColumns?: unknown };
type Manifest = { metadata: { name: string }; spec: { group: string; scope: string; names: Record<string, unknown>; versions: Version[] } };

const drainRuleDef = CRDS.find((d) => d.kind === 'DrainRule')!;
const drainRule = crdManifest(drainRuleDef) as Manifest;
const root = drainRule.spec.versions[0]!.schema.openAPIV3Schema;
const at = (s: JsonSchema, ...path: string[]): JsonSchema =>
  path.reduce((n, p) => (p === '[*]' ? (n.items as JsonSchema) : (n.properties as Record<string, JsonSchema>)[p]!), s);
const spec = at(root, 'spec');
const rules = (s: JsonSchema) => (s['x-kubernetes-validations'] as { rule: string; message: string }[] | undefined) ?? [];

/** Every schema node with its path: properties, items and additionalProperties, recursively. */
function nodes(s: JsonSchema, path = ''): [string, JsonSchema][] {
  const out: [string, JsonSchema][] = [[path || '(root)', s]];
  for (const [k, v] of Object.entries((s.properties as Record<string, JsonSchema>) ?? {})) out.push(...nodes(v, `${path}.${k}`));
  if (s.items) out.push(...nodes(s.items as JsonSchema, `${path}[*]`));
  if (typeof s.additionalProperties === 'object') out.push(...nodes(s.additionalProperties as JsonSchema, `${path}.*`));
  return out;
}

describe('generated CRD files', () => {
  test('crds/ matches renderCrds() (run npm run crds after changing api/)', () => {
    const { stale, missing, extra } = staleCrds();
    const problems = [...stale.map((f) => `stale ${f}`), ...missing.map((f) => `missing ${f}`), ...extra.map((f) => `extra ${f}`)];
    expect(problems.map((p) => `crds/ is out of date (${p}): run npm run crds`)).toEqual([]);
  });

  test('one file per CRD, named <group>_<plural>.yaml, and one with the admission policies, each with the do-not-edit header', () => {
    const files = renderCrds();
    expect([...files.keys()]).toEqual([...CRDS.map((d) => `slipway.dev_${d.plural}.yaml`), 'admission-policies.yaml']);
    for (const text of files.values()) expect(text.startsWith('# Generated from api/ by npm run crds. Do not edit.\n')).toBe(true);
  });

  test('crds/Kustomization lists every generated file (the base deploy/ includes), under a name kubectl apply -f crds/ skips', () => {
    const k = parse(renderKustomization()) as { kind: string; resources: string[] };
    expect(k.kind).toBe('Kustomization');
    expect(k.resources).toEqual([...renderCrds().keys()]);
    expect(KUSTOMIZATION_FILE).not.toMatch(/\.(ya?ml|json)$/);
  });
});

describe('Evacuation CRD', () => {
  test('NM-1.10 a second kind in slipway.dev/v1alpha1: namespaced, short name evac, category slipway', () => {
    const evacuation = crdManifest(CRDS.find((d) => d.kind === 'Evacuation')!) as Manifest;
    expect(evacuation.metadata.name).toBe('evacuations.slipway.dev');
    expect(evacuation.spec.group).toBe('slipway.dev');
    expect(evacuation.spec.scope).toBe('Namespaced');
    expect(evacuation.spec.names).toMatchObject({ kind: 'Evacuation', plural: 'evacuations', shortNames: ['evac'], categories: ['slipway'] });
    expect(evacuation.spec.versions.map((v) => v.name)).toEqual(['v1alpha1']);
  });
});

describe('DrainRule CRD', () => {
  test('names, scope, one served storage version, no status subresource, printer columns', () => {
    expect(drainRule.metadata.name).toBe('drainrules.slipway.dev');
    expect(drainRule.spec.group).toBe('slipway.dev');
    expect(drainRule.spec.scope).toBe('Cluster');
    expect(drainRule.spec.names).toEqual({ kind: 'DrainRule', listKind: 'DrainRuleList', plural: 'drainrules', singular: 'drainrule', shortNames: ['sdr', 'dr'], categories: ['slipway'] });
    expect(drainRule.spec.versions).toHaveLength(1);
    const v = drainRule.spec.versions[0]!;
    expect([v.name, v.served, v.storage, v.subresources]).toEqual(['v1alpha1', true, true, undefined]);
    expect(v.additionalPrinterColumns).toMatchObject([
      { name: 'Behavior', type: 'string', jsonPath: '.spec.drain.behavior' },
      { name: 'Order', type: 'integer', jsonPath: '.spec.drain.order' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    ]);
  });

  test('top level: apiVersion, kind, metadata, spec (required), and no status', () => {
    expect(root.type).toBe('object');
    expect(root.required).toEqual(['spec']);
    expect(Object.keys(root.properties as object)).toEqual(['apiVersion', 'kind', 'metadata', 'spec']);
    expect(at(root, 'apiVersion')).toMatchObject({ type: 'string' });
    expect(at(root, 'metadata')).toEqual({ type: 'object' });
  });

  test('the schema is structural: every node typed, no propertyNames, no additionalProperties false, no unions', () => {
    const all = nodes(root);
    expect(all.length).toBeGreaterThan(20);
    for (const [path, n] of all) {
      expect([path, typeof n.type]).toEqual([path, 'string']);
      for (const k of ['propertyNames', 'anyOf', 'oneOf', 'allOf', '$ref', '$schema', 'const']) expect([path, k, k in n]).toEqual([path, k, false]);
      expect([path, n.additionalProperties === false]).toEqual([path, false]);
      expect([path, Boolean(n.properties && n.additionalProperties)]).toEqual([path, false]);
    }
    // matchLabels is a map of label values: additionalProperties only, its keys checked by CEL.
    const matchLabels = at(spec, 'pods', '[*]', 'selector', 'matchLabels');
    expect(Object.keys(matchLabels).sort()).toEqual(['additionalProperties', 'description', 'maxProperties', 'type', 'x-kubernetes-validations']);
    expect(matchLabels.additionalProperties).toEqual({ type: 'string', maxLength: 63, pattern: LABEL_VALUE_PATTERN });
  });

  test('the int32 order is format int32 with the range as bounds (the apiserver does not enforce the format)', () => {
    expect(at(spec, 'drain', 'order')).toMatchObject({ type: 'integer', format: 'int32', minimum: -2147483648, maximum: 2147483647 });
  });

  test('enum, list bounds, map-type and required carry over', () => {
    expect(at(spec, 'drain', 'behavior').enum).toEqual(['Drain', 'Skip', 'WaitCompleted']);
    expect(at(spec, 'drain').required).toEqual(['behavior']);
    expect([at(spec, 'pods').minItems, at(spec, 'pods').maxItems]).toEqual([1, 32]);
    expect(at(spec, 'nodes', '[*]', 'selector')['x-kubernetes-map-type']).toBe('atomic');
    expect(at(spec, 'pods', '[*]', 'selector', 'matchExpressions', '[*]', 'key')).toMatchObject({ maxLength: 317, pattern: LABEL_KEY_PATTERN });
    expect(at(spec, 'pods', '[*]', 'selector', 'matchExpressions', '[*]', 'values', '[*]')).toEqual({ type: 'string', maxLength: 63, pattern: LABEL_VALUE_PATTERN });
    expect([at(spec, 'pods', '[*]', 'selector', 'matchExpressions').maxItems, at(spec, 'pods', '[*]', 'selector', 'matchLabels').maxProperties]).toEqual([64, 64]);
  });

  test('CEL rules: order only with Drain, unique nodes and pods, In/NotIn values, non-empty entries, label keys', () => {
    expect(rules(at(spec, 'drain'))).toEqual([{ rule: "!has(self.order) || self.behavior == 'Drain'", message: 'order is allowed only with behavior Drain', fieldPath: '.order' }]);
    // Uniqueness sits on the list; the message names the later of two equal entries (#24.10).
    expect(rules(at(spec, 'pods'))).toEqual([entryRule('pods', 32, repeatsEarlier(), 'entries in pods must be unique')]);
    expect(rules(at(spec, 'nodes'))).toEqual([entryRule('nodes', 32, repeatsEarlier(), 'entries in nodes must be unique')]);
    expect(rules(at(spec, 'pods', '[*]')).map((r) => r.message)).toEqual(['a pods entry needs a selector or a namespaceSelector']);
    expect(rules(at(spec, 'nodes', '[*]')).map((r) => r.message)).toEqual(['a nodes entry needs a selector']);
    const valuesRule = "self.operator in ['In', 'NotIn'] ? (has(self.values) && size(self.values) > 0) : (!has(self.values) || size(self.values) == 0)";
    for (const sel of [['nodes', '[*]', 'selector'], ['pods', '[*]', 'selector'], ['pods', '[*]', 'namespaceSelector']]) {
      expect(rules(at(spec, ...sel, 'matchExpressions', '[*]')).map((r) => r.rule)).toEqual([valuesRule]);
      // The map's keys: the same pattern as the key of an expression, and the prefix bound.
      expect(rules(at(spec, ...sel, 'matchLabels'))[0]!.rule).toBe(`self.all(k, ${celIsLabelKey('k')})`);
      expect(rules(at(spec, ...sel, 'matchExpressions', '[*]', 'key')).map((r) => r.rule)).toEqual(["!self.contains('/') || self.indexOf('/') <= 253"]);
    }
    expect(celIsLabelKey('k')).toContain(`k.matches('${LABEL_KEY_PATTERN}')`);
  });
});

describe('admission policies', () => {
  test('a Warn-only policy and its binding for DrainRules that apply to every pod', () => {
    const [policy, binding] = POLICIES as Array<{ kind: string; metadata: { name: string }; spec: Record<string, unknown> }>;
    expect([policy!.kind, binding!.kind]).toEqual(['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
    expect(binding!.spec).toEqual({ policyName: policy!.metadata.name, validationActions: ['Warn'] });
    expect(policy!.spec).toMatchObject({
      failurePolicy: 'Ignore',
      matchConstraints: { resourceRules: [{ apiGroups: ['slipway.dev'], apiVersions: ['v1alpha1'], operations: ['CREATE', 'UPDATE'], resources: ['drainrules'] }] },
    });
    expect(renderCrds().get('admission-policies.yaml')).toContain('---\n');
  });
});

interface TreeT { name: string; children?: TreeT[] }
const Tree: z.ZodType<TreeT> = z.object({
  name: z.string(),
  get children() {
    return z.array(Tree).optional();
  },
});

describe('structuralSchema', () => {
  test('rewrites zod output into the structural subset', () => {
    const s = structuralSchema(
      z.object({
        name: z.string().nullable().optional(),
        count: z.int32().min(0),
        ratio: z.number().gt(0).lt(1),
        mode: z.literal('fast'),
        labels: z.record(z.string(), z.string()),
        strict: z.strictObject({ a: z.string() }),
        loose: z.looseObject({ a: z.string() }),
        level: z.enum(['a', 'b']).nullable(),
      }),
    );
    expect(s).toEqual({
      type: 'object',
      properties: {
        name: { type: 'string', nullable: true },
        count: { type: 'integer', minimum: 0, maximum: 2147483647, format: 'int32' },
        ratio: { type: 'number', minimum: 0, exclusiveMinimum: true, maximum: 1, exclusiveMaximum: true },
        mode: { type: 'string', enum: ['fast'] },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        strict: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
        loose: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], 'x-kubernetes-preserve-unknown-fields': true },
        level: { type: 'string', enum: ['a', 'b'], nullable: true },
      },
      required: ['count', 'ratio', 'mode', 'labels', 'strict', 'loose', 'level'],
    });
  });

  test.each([
    ['a union', z.object({ v: z.union([z.string(), z.object({ a: z.string() })]) }), /at \.v .*union/],
    ['a union of primitives', z.object({ v: z.union([z.string(), z.number()]) }), /at \.v .*union of types/],
    ['an untyped value', z.object({ v: z.unknown() }), /at \.v .*no type/],
    ['constrained map keys', z.object({ v: z.record(z.enum(['a', 'b']), z.string()) }), /at \.v .*map keys/],
    ['a lookahead pattern', z.object({ v: z.string().regex(/^(?!x)/) }), /at \.v .*not RE2/],
    ['a tuple', z.object({ v: z.tuple([z.string(), z.number()]) }), /at \.v /],
    ['a recursive type', Tree, /cycle/i],
  ])('refuses %s instead of writing a weaker CRD', (_what, schema, message) => {
    expect(() => structuralSchema(schema as z.ZodType)).toThrow(message);
  });

  test('a status type adds the status property and subresource', () => {
    const def: CrdDefinition = { kind: 'Thing', description: 'A thing.', plural: 'things', singular: 'thing', scope: 'Namespaced', spec: z.object({ a: z.string() }), status: z.object({ phase: z.string().optional() }) };
    const m = crdManifest(def) as Manifest;
    const v = m.spec.versions[0]!;
    expect(v.subresources).toEqual({ status: {} });
    expect(at(v.schema.openAPIV3Schema, 'status')).toEqual({ type: 'object', properties: { phase: { type: 'string' } } });
    expect(m.spec.scope).toBe('Namespaced');
    expect(m.metadata.name).toBe('things.slipway.dev');
  });
});

describe('validateDrainRule and parseDrainRule (drain-time validation with the same zod types)', () => {
  const parse = (spec: unknown) => parseDrainRule({ metadata: { name: 'r1' }, spec });
  const KEY = 'is not valid: an optional DNS subdomain prefix of at most 253 characters and "/", then a name of 1 to 63 letters, digits, "-", "_" or ".", beginning and ending with a letter or digit';

  test('a valid rule is accepted as written', () => {
    const spec = {
      drain: { behavior: 'Drain', order: 10 },
      nodes: [{ selector: { matchLabels: { 'node.kubernetes.io/pool': 'db' } } }],
      pods: [{ selector: { matchLabels: { app: 'db' } }, namespaceSelector: { matchExpressions: [{ key: 'team', operator: 'In', values: ['data'] }] } }],
    };
    expect(parse(spec)).toEqual({ rule: { name: 'r1', spec } });
    expect(validateDrainRule({ metadata: { name: 'r1' }, spec })).toEqual({ rule: { name: 'r1', spec }, errors: [] });
  });

  test('order with Skip is rejected, naming the path', () => {
    expect(parse({ drain: { behavior: 'Skip', order: 1 } }).error).toBe('DrainRule r1 is invalid: spec.drain.order: order is allowed only with behavior Drain');
    expect(DrainRuleSpec.safeParse({ drain: { behavior: 'WaitCompleted', order: 0 } }).success).toBe(false);
  });

  test.each([
    ['a key with two slashes', { matchLabels: { 'a/b/c': 'x' } }, `spec.pods[0].selector.matchLabels[a/b/c]: label key "a/b/c" ${KEY}`],
    ['In without values', { matchExpressions: [{ key: 'a', operator: 'In' }] }, 'spec.pods[0].selector.matchExpressions[0].values: operator In on "a" needs values'],
    ['NotIn with empty values', { matchExpressions: [{ key: 'a', operator: 'NotIn', values: [] }] }, 'spec.pods[0].selector.matchExpressions[0].values: operator NotIn on "a" needs values'],
    ['Exists with values', { matchExpressions: [{ key: 'a', operator: 'Exists', values: ['x'] }] }, 'spec.pods[0].selector.matchExpressions[0].values: operator Exists on "a" takes no values'],
    ['an invalid label value', { matchLabels: { a: '-x' } }, 'spec.pods[0].selector.matchLabels.a: label value "-x" is not valid: empty, or 1 to 63 letters, digits, "-", "_" or ".", beginning and ending with a letter or digit'],
  ])('a selector with %s is rejected at its field', (_what, selector, message) => {
    expect(parse({ drain: { behavior: 'Drain' }, pods: [{ selector }] }).error).toBe(`DrainRule r1 is invalid: ${message}`);
  });

  test('an unknown operator is rejected at its path, in the apiserver\'s words', () => {
    expect(parse({ drain: { behavior: 'Drain' }, nodes: [{ selector: { matchExpressions: [{ key: 'a', operator: 'Like', values: ['x'] }] } }] }).error).toBe(
      'DrainRule r1 is invalid: spec.nodes[0].selector.matchExpressions[0].operator: Unsupported value: "Like": supported values: "In", "NotIn", "Exists", "DoesNotExist"',
    );
  });

  test('duplicate pods entries are rejected at the second one', () => {
    const entry = { selector: { matchLabels: { app: 'db' } } };
    expect(parse({ drain: { behavior: 'Drain' }, pods: [entry, { selector: { matchLabels: { app: 'web' } } }, entry] }).error).toBe(
      'DrainRule r1 is invalid: spec.pods[2]: entries in pods must be unique',
    );
  });

  test('every problem is reported, not just the first; validateDrainRule gives one line each, naming the rule', () => {
    const obj = { metadata: { name: 'r1' }, spec: { drain: { behavior: 'Skip', order: 1 }, pods: [{ selector: { matchLabels: { 'a/b/c': 'x' } } }] } };
    expect(validateDrainRule(obj)).toEqual({
      errors: [`DrainRule r1: spec.pods[0].selector.matchLabels[a/b/c]: label key "a/b/c" ${KEY}`, 'DrainRule r1: spec.drain.order: order is allowed only with behavior Drain'],
    });
    expect(parseDrainRule(obj).error).toBe(`DrainRule r1 is invalid: ${validateDrainRule(obj).errors.map((e) => e.slice('DrainRule r1: '.length)).join('; ')}`);
  });

  test('an object without a spec is an error, not an empty rule', () => {
    expect(validateDrainRule({ metadata: { name: 'r2' } }).errors).toEqual(['DrainRule r2: spec: Invalid input: expected object, received undefined']);
  });
});
