// zod type → CustomResourceDefinition. The apiserver accepts only *structural* OpenAPI v3 schemas
// (every node typed, no unions, no propertyNames, no additionalProperties next to properties), so
// zod's JSON Schema is rewritten into that subset. Anything without a faithful rewrite throws with
// its path: a CRD that silently validates less than the zod type would let bad objects in.
import { z } from 'zod';

import { API_VERSION, GROUP, VERSION } from './names.js';
export { GROUP, VERSION } from './names.js';

export type JsonSchema = { [key: string]: unknown };

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  jsonPath: string;
  /** What the column shows (kubectl explain and the OpenAPI document show it); required. */
  description: string;
  priority?: number;
}

export interface CrdDefinition {
  kind: string;
  /** What an object of this kind is for: the top of `kubectl explain <kind>`. */
  description: string;
  plural: string;
  singular: string;
  shortNames?: string[];
  scope: 'Cluster' | 'Namespaced';
  spec: z.ZodType;
  status?: z.ZodType;
  printerColumns?: PrinterColumn[];
  categories?: string[];
  /** CEL rules on the whole object (they may read status, and oldSelf on updates). */
  validations?: Array<{ rule: string; message: string; fieldPath?: string }>;
}

const INT32_MIN = -2147483648;
const INT32_MAX = 2147483647;
const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);
// Keywords of apiextensions/v1 JSONSchemaProps that carry over unchanged (x-kubernetes-* too).
const KEEP = new Set([
  'type', 'format', 'description', 'title', 'default', 'enum', 'nullable', 'required',
  'minimum', 'maximum', 'multipleOf', 'minLength', 'maxLength', 'pattern',
  'minItems', 'maxItems', 'minProperties', 'maxProperties', 'example',
]);
// Go's regexp (RE2) evaluates `pattern`: no lookaround, no backreferences.
const NOT_RE2 = /\(\?<?[=!]|\\[1-9]|\\k</;

const isObj = (v: unknown): v is JsonSchema => typeof v === 'object' && v !== null && !Array.isArray(v);

function fail(path: string, why: string): never {
  throw new Error(`cannot convert schema at ${path || '(root)'} to a structural CRD schema: ${why}`);
}

/** Structural OpenAPI v3 schema of a zod type (its input side: what users write in the object). */
export function structuralSchema(schema: z.ZodType): JsonSchema {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'throw', cycles: 'throw', reused: 'inline' }) as JsonSchema;
  delete json.$schema;
  return convert(json, '');
}

// `T | null` as zod emits it (type: [T, 'null'], or anyOf/oneOf with a {type:'null'} member) → nullable: true.
function unwrapNullable(node: JsonSchema, path: string): JsonSchema {
  if (Array.isArray(node.type)) {
    const types = node.type.filter((t) => t !== 'null');
    if (types.length !== 1) fail(path, `union of types ${JSON.stringify(node.type)}`);
    return { ...node, type: types[0], ...(types.length < node.type.length && { nullable: true }) };
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const members = node[key];
    if (members === undefined) continue;
    if (!Array.isArray(members)) fail(path, `${key} is not a list`);
    const rest = members.filter((m) => !(isObj(m) && m.type === 'null' && Object.keys(m).length === 1));
    const inner = rest[0];
    if (rest.length !== 1 || rest.length === members.length || !isObj(inner)) fail(path, `${key} (a union) has no structural equivalent`);
    const { [key]: _, ...outer } = node;
    for (const [k, v] of Object.entries(outer)) {
      if (k in inner && JSON.stringify(inner[k]) !== JSON.stringify(v)) fail(path, `nullable wrapper and inner schema disagree on ${k}`);
    }
    return unwrapNullable({ ...inner, ...outer, nullable: true }, path);
  }
  return node;
}

function convert(input: JsonSchema, path: string): JsonSchema {
  const node = unwrapNullable(input, path);
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(node)) {
    switch (k) {
      case 'properties':
        if (!isObj(v)) fail(path, 'properties is not an object');
        out.properties = Object.fromEntries(Object.entries(v).map(([name, s]) => [name, convert(s as JsonSchema, `${path}.${name}`)]));
        break;
      case 'items':
        if (!isObj(v)) fail(path, 'tuple items (prefixItems or an items list)');
        out.items = convert(v, `${path}[*]`);
        break;
      case 'additionalProperties':
        // false (z.strictObject) is forbidden next to properties; pruning drops unknown fields anyway.
        if (v === false) break;
        // {} (z.looseObject, z.record(…, z.unknown())) keeps unknown fields.
        if (v === true || (isObj(v) && Object.keys(v).length === 0)) out['x-kubernetes-preserve-unknown-fields'] = true;
        else if (isObj(v)) out.additionalProperties = convert(v, `${path}.*`);
        else fail(path, 'additionalProperties is not a schema');
        break;
      case 'propertyNames':
        // Map keys are strings in Kubernetes; constrained keys (z.record(z.enum…)) would be lost.
        if (!isObj(v) || v.type !== 'string' || Object.keys(v).length !== 1) fail(path, `constrained map keys ${JSON.stringify(v)}`);
        break;
      case 'const':
        out.enum = [v];
        break;
      case 'exclusiveMinimum':
      case 'exclusiveMaximum': {
        // JSON Schema 2020-12 gives the bound; OpenAPI v3 wants minimum/maximum plus a boolean.
        const bound = k === 'exclusiveMinimum' ? 'minimum' : 'maximum';
        if (typeof v !== 'number') fail(path, `${k} is not a number`);
        if (bound in node) fail(path, `both ${bound} and ${k}`);
        out[bound] = v;
        out[k] = true;
        break;
      }
      case 'uniqueItems':
        // The apiserver refuses uniqueItems: true (quadratic); use a CEL rule or a list-type set.
        if (v === true) fail(path, 'uniqueItems: true is not allowed in CRDs');
        break;
      case 'pattern':
        if (typeof v !== 'string' || NOT_RE2.test(v)) fail(path, `pattern ${JSON.stringify(v)} is not RE2 (lookaround or backreference)`);
        out.pattern = v;
        break;
      default:
        if (!KEEP.has(k) && !k.startsWith('x-kubernetes-')) fail(path, `unsupported keyword ${k}`);
        out[k] = v;
    }
  }
  if (out.type === 'integer') int32(out);
  const untyped = out['x-kubernetes-preserve-unknown-fields'] === true || out['x-kubernetes-int-or-string'] === true;
  if (out.type === undefined && !untyped) fail(path, 'no type (z.unknown/z.any need x-kubernetes-preserve-unknown-fields)');
  if (out.type !== undefined && !TYPES.has(out.type as string)) fail(path, `type ${JSON.stringify(out.type)}`);
  if (out.properties && out.additionalProperties) fail(path, 'both properties and additionalProperties');
  return out;
}

// z.int32() emits the int32 range as bounds; format int32 says the same for readers. The bounds stay:
// the apiserver does not enforce the format, and an order of 2^31 was admitted without them.
function int32(s: JsonSchema): void {
  const min = s.minimum;
  const max = s.maximum;
  if (typeof min !== 'number' || typeof max !== 'number' || s.exclusiveMinimum || s.exclusiveMaximum) return;
  if (min < INT32_MIN || max > INT32_MAX || (min !== INT32_MIN && max !== INT32_MAX)) return;
  s.format = 'int32';
}

// The fields every object has, in the words of the Kubernetes API conventions (as controller-gen writes them).
const META: JsonSchema = {
  apiVersion: {
    type: 'string',
    description: `APIVersion defines the versioned schema of this representation of an object: ${API_VERSION}.`,
  },
  kind: { type: 'string', description: 'Kind is the REST resource this object represents, in CamelCase.' },
  // The apiserver refuses anything but type here (metadata's schema is its own).
  metadata: { type: 'object' },
};

/** The apiextensions.k8s.io/v1 CustomResourceDefinition for one definition. */
export function crdManifest(def: CrdDefinition): JsonSchema {
  const properties: JsonSchema = { ...META, spec: structuralSchema(def.spec) };
  if (def.status) properties.status = structuralSchema(def.status);
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${def.plural}.${GROUP}` },
    spec: {
      group: GROUP,
      names: {
        kind: def.kind,
        listKind: `${def.kind}List`,
        plural: def.plural,
        singular: def.singular,
        ...(def.shortNames && { shortNames: def.shortNames }),
        ...(def.categories && { categories: def.categories }),
      },
      scope: def.scope,
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: { type: 'object', description: def.description, properties, required: ['spec'], ...(def.validations?.length && { 'x-kubernetes-validations': def.validations }) },
          },
          ...(def.status && { subresources: { status: {} } }),
          ...(def.printerColumns && { additionalPrinterColumns: def.printerColumns }),
        },
      ],
    },
  };
}
