// One corpus of NodeMaintenance specs, tested against zod (test/unit/node-maintenance-admission.test.ts,
// which is what the bridge checks with) and against the apiserver's schema and CEL rules
// (test/bad-input/node-maintenance.test.ts): each invalid spec is refused by both,
// naming the same field (NM-4.1–4.5, NM-1.4); each valid one is admitted by both.
import { MAX_PRIORITY } from '../../api/drain-plan.js';
import type { RefusedCase } from './bad-drain-rules.js';

/** Selects no node on any cluster: safe to create on the shared stack, at any stage. */
export const NO_NODE = { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['it-adm-no-such-node'] }] }] };
/** A valid spec; each case changes one thing. */
export const nm = (over: Record<string, unknown> = {}) => ({ nodeSelector: NO_NODE, ...over });
const terms = (...t: unknown[]) => nm({ nodeSelector: { nodeSelectorTerms: t } });
const expr = (e: Record<string, unknown>) => terms({ matchExpressions: [e] });
const field = (f: Record<string, unknown>) => terms({ matchFields: [f] });
const plan = (...entries: unknown[]) => nm({ drainPlan: entries });
const D = (podPriority: number, app?: string) => ({ podType: 'Default', podPriority, ...(app && { podSelector: { matchLabels: { app } } }) });
const DS = (podPriority: number) => ({ podType: 'DaemonSet', podPriority });
const S = (podPriority: number) => ({ podType: 'Static', podPriority });

/** A valid rollout; each rollout case changes one thing. */
export const ROLLOUT = { maxUnavailable: 2, completion: { reboot: true } };
const rollout = (over: Record<string, unknown>) => nm({ rollout: { ...ROLLOUT, ...over } });
const HEALTH = { endpoint: 'http://{{ .NodeIP }}:10256/healthz', waitPeriod: '1m' };
const MAX_UNAVAILABLE = 'maxUnavailable must be a number of nodes from 1 to 100000 or a percentage from 1% to 100%';
const NO_METHOD = 'completion must name at least one method: reboot, annotation or manual';

function BAD_ROLLOUTS(): RefusedCase[] {
  const mu = (v: unknown, label: string): RefusedCase => ({
    name: `#27.1 rollout.maxUnavailable ${label}`,
    spec: rollout({ maxUnavailable: v }),
    field: 'spec.rollout.maxUnavailable',
    // One message from zod and CEL alike; a fraction never reaches CEL (the schema's int-or-string type refuses it).
    message: Number.isInteger(v) || typeof v === 'string' ? `${JSON.stringify(v)}: ${MAX_UNAVAILABLE}` : { zod: `${JSON.stringify(v)}: ${MAX_UNAVAILABLE}`, apiserver: 'must be of type integer,string' },
  });
  const timeout = (t: string): RefusedCase => ({
    name: `#27.1 rollout.nodeTimeout of ${t}`, spec: rollout({ nodeTimeout: t }), field: 'spec.rollout.nodeTimeout', message: `"${t}" must be a duration between 1m and 168h`,
  });
  return [
    mu(0, '0'),
    mu('0%', '"0%"'),
    mu('101%', '"101%"'),
    mu(-1, '-1'),
    mu('abc', '"abc"'),
    mu(1.5, '1.5'),
    mu(100_001, '100001'),
    mu('25 %', '"25 %"'),
    { name: '#27.1 rollout.partitionBy that is not a label key', spec: rollout({ partitionBy: 'zone name!' }), field: 'spec.rollout.partitionBy', message: { zod: 'label key "zone name!" is not valid', apiserver: 'Invalid value: "zone name!"' } },
    { name: '#27.1 rollout without completion', spec: nm({ rollout: { maxUnavailable: 1 } }), field: 'spec.rollout.completion', message: { zod: 'expected object', apiserver: 'Required value' } },
    { name: '#27.1 rollout.completion with no method ({})', spec: rollout({ completion: {} }), field: 'spec.rollout.completion', message: NO_METHOD },
    { name: '#27.1 rollout.completion with healthChecks only', spec: rollout({ completion: { healthChecks: [HEALTH] } }), field: 'spec.rollout.completion', message: NO_METHOD },
    { name: '#27.1 rollout.completion with every method false', spec: rollout({ completion: { reboot: false, annotation: false, manual: false } }), field: 'spec.rollout.completion', message: NO_METHOD },
    { name: '#27.1 rollout.completion.healthChecks with a waitPeriod of 0s', spec: rollout({ completion: { manual: true, healthChecks: [{ ...HEALTH, waitPeriod: '0s' }] } }), field: 'spec.rollout.completion.healthChecks[0].waitPeriod', message: '"0s" must be a duration between 1s and 1h' },
    timeout('0s'),
    timeout('30s'),
    timeout('200h'),
    { name: '#27.1 rollout.nodeTimeout that is not a duration', spec: rollout({ nodeTimeout: '10 minutes' }), field: 'spec.rollout.nodeTimeout', message: { zod: '"10 minutes" is not a duration', apiserver: 'Invalid value: "10 minutes"' } },
    { name: '#27.1 rollout.nodeTimeoutPolicy unknown', spec: rollout({ nodeTimeoutPolicy: 'Reboot' }), field: 'spec.rollout.nodeTimeoutPolicy', message: 'Unsupported value: "Reboot": supported values: "KeepCordoned", "Uncordon"' },
    { name: '#27.1 rollout.maxFailures -1', spec: rollout({ maxFailures: -1 }), field: 'spec.rollout.maxFailures', message: { zod: '>=0', apiserver: 'should be greater than or equal to 0' } },
  ];
}

const EMPTY = 'nodeSelector must name at least one requirement; an empty selector is refused';
const ORDER = 'entries must be ordered Default, DaemonSet, Static, then by podPriority ascending, with podSelector entries before the entry without one at equal priority';
const EXPR0 = 'spec.nodeSelector.nodeSelectorTerms[0].matchExpressions[0]';
const FIELD0 = 'spec.nodeSelector.nodeSelectorTerms[0].matchFields[0]';

export const BAD_NODE_MAINTENANCES: RefusedCase[] = [
  // NM-4.1: empty selector forms.
  { name: 'NM-4.1 no nodeSelector', spec: {}, field: 'spec.nodeSelector', message: { zod: 'expected object', apiserver: 'Required value' } },
  { name: 'NM-4.1 a nodeSelector without nodeSelectorTerms', spec: nm({ nodeSelector: {} }), field: 'spec.nodeSelector.nodeSelectorTerms', message: EMPTY },
  { name: 'NM-4.1 an empty nodeSelectorTerms list', spec: terms(), field: 'spec.nodeSelector.nodeSelectorTerms', message: EMPTY },
  { name: 'NM-4.1 a term with neither matchExpressions nor matchFields', spec: terms({ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['a'] }] }, {}), field: 'spec.nodeSelector.nodeSelectorTerms[1]', message: EMPTY },
  { name: 'NM-4.1 a term with empty lists', spec: terms({ matchExpressions: [], matchFields: [] }), field: 'spec.nodeSelector.nodeSelectorTerms[0]', message: EMPTY },
  // NM-4.2: requirements.
  { name: 'NM-4.2 In without values', spec: expr({ key: 'pool', operator: 'In' }), field: `${EXPR0}.values`, message: 'operator In on "pool" needs values' },
  { name: 'NM-4.2 NotIn with an empty list', spec: expr({ key: 'pool', operator: 'NotIn', values: [] }), field: `${EXPR0}.values`, message: 'operator NotIn on "pool" needs values' },
  { name: 'NM-4.2 Exists with values', spec: expr({ key: 'pool', operator: 'Exists', values: ['a'] }), field: `${EXPR0}.values`, message: 'operator Exists on "pool" takes no values' },
  { name: 'NM-4.2 DoesNotExist with values', spec: expr({ key: 'pool', operator: 'DoesNotExist', values: ['a'] }), field: `${EXPR0}.values`, message: 'operator DoesNotExist on "pool" takes no values' },
  { name: 'NM-4.2 Gt with two values', spec: expr({ key: 'rank', operator: 'Gt', values: ['1', '2'] }), field: `${EXPR0}.values`, message: 'operator Gt on "rank" takes exactly one integer value' },
  { name: 'NM-4.2 Lt with a value that is not an integer', spec: expr({ key: 'rank', operator: 'Lt', values: ['abc'] }), field: `${EXPR0}.values`, message: 'operator Lt on "rank" takes exactly one integer value' },
  { name: 'NM-4.2 Gt without values', spec: expr({ key: 'rank', operator: 'Gt' }), field: `${EXPR0}.values`, message: 'operator Gt on "rank" takes exactly one integer value' },
  { name: 'NM-4.2 an unknown operator', spec: expr({ key: 'pool', operator: 'Like', values: ['a'] }), field: `${EXPR0}.operator`, message: 'Unsupported value: "Like": supported values: "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"' },
  { name: 'NM-4.2 an invalid label key', spec: expr({ key: 'bad key!', operator: 'Exists' }), field: `${EXPR0}.key`, message: '"bad key!"' },
  { name: 'NM-4.2 an invalid label value', spec: expr({ key: 'pool', operator: 'In', values: ['ok', 'no!'] }), field: `${EXPR0}.values[1]`, message: '"no!"' },
  { name: 'NM-4.2 matchFields on a field other than metadata.name', spec: field({ key: 'metadata.labels', operator: 'In', values: ['a'] }), field: `${FIELD0}.key`, message: 'Unsupported value: "metadata.labels": supported values: "metadata.name"' },
  { name: 'NM-4.2 matchFields with Exists', spec: field({ key: 'metadata.name', operator: 'Exists' }), field: `${FIELD0}.operator`, message: 'Unsupported value: "Exists": supported values: "In", "NotIn"' },
  { name: 'NM-4.2 matchFields In without values', spec: field({ key: 'metadata.name', operator: 'In' }), field: `${FIELD0}.values`, message: 'operator In on "metadata.name" needs values' },
  { name: 'NM-4.2 matchFields with a value that is not a node name', spec: field({ key: 'metadata.name', operator: 'NotIn', values: ['Bad_Name'] }), field: `${FIELD0}.values[0]`, message: { zod: '"Bad_Name" is not a node name', apiserver: 'Invalid value: "Bad_Name"' } },
  // NM-4.3: stage.
  { name: 'NM-4.3 an unknown stage', spec: nm({ stage: 'Paused' }), field: 'spec.stage', message: 'Unsupported value: "Paused": supported values: "Idle", "Cordon", "Drain", "Complete"' },
  // NM-4.4: plan order (the spec's examples first).
  { name: 'NM-4.4 a DaemonSet entry before a Default entry', spec: plan(DS(1000), D(1000)), field: 'spec.drainPlan[1]', message: ORDER },
  { name: 'NM-4.4 D≤2000 before D≤1000', spec: plan(D(2000), D(1000)), field: 'spec.drainPlan[1]', message: ORDER },
  { name: 'NM-4.4 {D≤1000} before {D≤1000, app=x}', spec: plan(D(1000), D(1000, 'x')), field: 'spec.drainPlan[1]', message: ORDER },
  { name: 'NM-4.4 a Static entry before a DaemonSet entry', spec: plan(D(10), S(10), DS(10)), field: 'spec.drainPlan[2]', message: ORDER },
  { name: 'NM-4.4 a negative priority after a positive one', spec: plan(D(0), D(-1)), field: 'spec.drainPlan[1]', message: ORDER },
  // NM-4.5: duplicates, size, drain.drainPlan.
  { name: 'NM-4.5 two equal entries', spec: plan(D(1000), D(1000)), field: 'spec.drainPlan[1]', message: 'Duplicate entries are not allowed' },
  { name: 'NM-4.5 two equal selector entries apart', spec: plan(D(1000, 'x'), D(1000, 'y'), D(1000, 'x')), field: 'spec.drainPlan[2]', message: 'Duplicate entries are not allowed' },
  { name: 'NM-4.5 65 entries', spec: plan(...Array.from({ length: 65 }, (_, i) => D(i))), field: 'spec.drainPlan', message: '64 items' },
  { name: 'NM-4.5 drain.drainPlan', spec: nm({ drain: { drainPlan: [D(1000)] } }), field: 'spec.drain.drainPlan', message: 'use spec.drainPlan' },
  // NM-1.4: entries.
  { name: 'NM-1.4 an entry without podPriority', spec: plan({ podType: 'Default' }), field: 'spec.drainPlan[0].podPriority', message: 'podPriority is required' },
  { name: 'NM-1.4 a podPriority of 2^31', spec: plan(D(2 ** 31)), field: 'spec.drainPlan[0].podPriority', message: '2147483647' },
  { name: 'NM-1.4 an unknown podType', spec: plan({ podType: 'Job', podPriority: 1 }), field: 'spec.drainPlan[0].podType', message: 'Unsupported value: "Job": supported values: "Default", "DaemonSet", "Static"' },
  { name: 'NM-1.4 a podSelector with an invalid label key', spec: plan({ podPriority: 1, podSelector: { matchLabels: { 'bad key!': 'x' } } }), field: 'spec.drainPlan[0].podSelector.matchLabels[bad key!]', message: 'label key "bad key!" is not valid' },
  // Other fields.
  { name: 'a reason of 1025 characters', spec: nm({ reason: 'r'.repeat(1025) }), field: 'spec.reason', message: '1024' },
  { name: 'an evacuationProgressDeadline of 5s', spec: nm({ drain: { evacuationProgressDeadline: '5s' } }), field: 'spec.drain.evacuationProgressDeadline', message: '"5s" must be a duration between 10s and 6h' },
  // #27 spec.rollout (docs/rolling-maintenance.md): each case names the field it refuses.
  ...BAD_ROLLOUTS(),
];

/** Admitted by both. */
export const VALID_NODE_MAINTENANCES: Array<{ name: string; spec: unknown }> = [
  { name: 'only a nodeSelector (every default)', spec: nm() },
  {
    name: 'NM-4.2 every operator, matchFields NotIn, two terms',
    spec: terms(
      {
        matchExpressions: [
          { key: 'pool', operator: 'In', values: ['a', 'b'] },
          { key: 'example.com/zone', operator: 'NotIn', values: ['z'] },
          { key: 'gpu', operator: 'Exists' },
          { key: 'spot', operator: 'DoesNotExist', values: [] },
          { key: 'rank', operator: 'Gt', values: ['5'] },
          { key: 'rank', operator: 'Lt', values: ['100'] },
        ],
      },
      { matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['it-adm-a', 'it-adm-b.example'] }] },
    ),
  },
  { name: 'NM-4.4 two different selectors at the same type and priority, then the entry without one', spec: plan(D(1000, 'x'), D(1000, 'y'), D(1000)) },
  { name: 'NM-1.5 the spec\'s plan [D≤5000, D≤15000, DS≤3000]', spec: plan(D(5000), D(15000), DS(3000)) },
  {
    name: 'E1\'s plan at stage Drain, with a reason and drain options',
    spec: nm({
      stage: 'Drain',
      reason: 'kernel upgrade',
      drainPlan: [D(1000), D(2000, 'postgres'), D(MAX_PRIORITY), DS(1000), DS(MAX_PRIORITY), S(MAX_PRIORITY)],
      drain: { podEvictionTimeout: { after: '5m', policy: 'Delete' }, volumeDetachTimeout: '2m', evictionConcurrency: 4, evictionQPS: 10, evacuationProgressDeadline: '30s' },
    }),
  },
  { name: 'NM-4.5 64 entries from -2^31 to MAX', spec: plan(D(-(2 ** 31)), ...Array.from({ length: 62 }, (_, i) => D(i)), D(MAX_PRIORITY)) },
  { name: '#27.1 a rollout with every field: a percentage, a zone partition, every method, health checks, a timeout', spec: nm({ rollout: { maxUnavailable: '25%', partitionBy: 'topology.kubernetes.io/zone', completion: { reboot: true, annotation: true, manual: true, healthChecks: [HEALTH] }, nodeTimeout: '2h', nodeTimeoutPolicy: 'Uncordon', maxFailures: 3 } }) },
  { name: '#27.1 a rollout at its bounds: maxUnavailable "100%", nodeTimeout 1m and 168h', spec: rollout({ maxUnavailable: '100%', nodeTimeout: '1m' }) },
  { name: '#27.1 a rollout with maxUnavailable as digits ("3"), 100000, nodeTimeout 168h', spec: nm({ stage: 'Drain', rollout: { maxUnavailable: '3', completion: { annotation: true }, nodeTimeout: '168h' } }) },
  { name: '#27.1 a rollout with only a completion (maxUnavailable defaults to 1)', spec: nm({ rollout: { completion: { manual: true } } }) },
  { name: 'E2\'s metadata.name In [one, two], created at stage Complete', spec: nm({ stage: 'Complete', nodeSelector: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['it-adm-one', 'it-adm-two'] }] }] } }) },
];
