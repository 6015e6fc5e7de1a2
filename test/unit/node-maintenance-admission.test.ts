// NodeMaintenance admission, zod side (the apiserver side: test/integration/admission-node-maintenance.test.ts):
// the corpus of bad and valid specs, the defaults (NM-1.2–1.4), the transition rules as the
// workflow's specChanged validator checks them (NM-2.1, NM-4.6), and the generated CRD (NM-1.1).
import { issueMessages } from '../../api/admission.js';
import { crdManifest, type JsonSchema } from '../../api/crd.js';
import { CRDS } from '../../api/crds.js';
import { DEFAULT_DRAIN_PLAN } from '../../api/drain-plan.js';
import { POLICIES } from '../../api/crds.js';
import { NODE_DELETE_POLICY, NodeMaintenanceSpec, NodeMaintenanceStatus, specTransitionErrors, stageBackMessage } from '../../api/node-maintenance.js';
import type { MaintenanceStatus } from '../../workflows/maintenance/types.js';
import { zodNames } from '../support/admission-paths.js';
import { BAD_NODE_MAINTENANCES, nm, VALID_NODE_MAINTENANCES } from '../support/bad-node-maintenances.js';
import type { RefusedCase } from '../support/bad-drain-rules.js';

const zodMessage = (c: RefusedCase) => (typeof c.message === 'string' ? c.message : c.message.zod);
const parse = (spec: unknown) => NodeMaintenanceSpec.parse(spec);

describe('NodeMaintenance corpus, zod side (NodeMaintenanceSpec, as the bridge checks specs)', () => {
  test('the corpus has at least 18 bad and 5 valid specs', () => {
    expect(BAD_NODE_MAINTENANCES.length).toBeGreaterThanOrEqual(18);
    expect(VALID_NODE_MAINTENANCES.length).toBeGreaterThanOrEqual(5);
  });

  test.each(BAD_NODE_MAINTENANCES.map((c) => [c.name, c] as const))('refuses %s, naming the exact field', (_name, c) => {
    const r = NodeMaintenanceSpec.safeParse(c.spec);
    expect(r.success).toBe(false);
    const errors = issueMessages(r.error!);
    expect([c.field, zodNames(errors, c.field, zodMessage(c)), errors]).toEqual([c.field, true, errors]);
  });

  test.each(VALID_NODE_MAINTENANCES.map((c) => [c.name, c] as const))('accepts %s', (_name, c) => {
    const r = NodeMaintenanceSpec.safeParse(c.spec);
    expect(r.success ? [] : issueMessages(r.error)).toEqual([]);
  });

  test('NM-4.4 an out-of-order plan names the first entry out of place, in the spec\'s words', () => {
    const r = NodeMaintenanceSpec.safeParse(nm({ drainPlan: [{ podPriority: 1 }, { podPriority: 3 }, { podPriority: 2 }] }));
    expect(issueMessages(r.error!)).toEqual([
      'spec.drainPlan[2]: entries must be ordered Default, DaemonSet, Static, then by podPriority ascending, with podSelector entries before the entry without one at equal priority',
    ]);
  });

  test('NM-4.5 drain.drainPlan is refused, and the parsed drain options never carry one', () => {
    expect(issueMessages(NodeMaintenanceSpec.safeParse(nm({ drain: { drainPlan: [] } })).error!)).toEqual(['spec.drain.drainPlan: use spec.drainPlan']);
    expect(Object.keys(parse(nm({ drain: {} })).drain!)).not.toContain('drainPlan');
  });
});

describe('NodeMaintenance defaults (zod; the CRD carries the same defaults)', () => {
  test('NM-1.2 a spec without stage parses as Idle', () => {
    expect(parse(nm()).stage).toBe('Idle');
  });

  test('NM-1.3 a spec without drainPlan gets the 12 default entries in order', () => {
    const p = parse(nm()).drainPlan;
    expect(p).toEqual(DEFAULT_DRAIN_PLAN);
    expect(p.map((e) => `${e.podType}≤${e.podPriority}`)).toEqual(
      ['Default', 'DaemonSet', 'Static'].flatMap((t) => [1000000000, 2000000000, 2000001000, 2147483647].map((p) => `${t}≤${p}`)),
    );
  });

  test('NM-1.4 an entry without podType is Default; the written plan stays as written', () => {
    expect(parse(nm({ drainPlan: [{ podPriority: 5000 }, { podPriority: 3000, podType: 'DaemonSet' }] })).drainPlan).toEqual([
      { podType: 'Default', podPriority: 5000 },
      { podType: 'DaemonSet', podPriority: 3000 },
    ]);
  });

  test('drain options get the drain engine\'s defaults and the 30m evacuation deadline', () => {
    expect(parse(nm({ drain: {} })).drain).toEqual({ evictionConcurrency: 16, evictionQPS: 50, evacuationProgressDeadline: '30m' });
  });
});

describe('specTransitionErrors (the CRD transition rules in the same words, for the specChanged validator)', () => {
  const idle = parse(nm());
  const at = (stage: string, over: Record<string, unknown> = {}) => parse(nm({ stage, ...over }));
  const otherSelector = { nodeSelector: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'pool', operator: 'Exists' }] }] } };

  test('NM-2.1 every forward move and the same stage are allowed; every backward move is refused', () => {
    const stages = ['Idle', 'Cordon', 'Drain', 'Complete'];
    for (const [i, from] of stages.entries()) {
      for (const [j, to] of stages.entries()) {
        expect([from, to, specTransitionErrors(at(from), at(to))]).toEqual([from, to, j >= i ? [] : [stageBackMessage(from, to)]]);
      }
    }
    expect(stageBackMessage('Drain', 'Cordon')).toBe('spec.stage cannot go back from Drain to Cordon');
  });

  test('NM-4.6 drainPlan never changes, even while Idle', () => {
    expect(specTransitionErrors(idle, parse(nm({ drainPlan: [{ podPriority: 1 }] })))).toEqual(['spec.drainPlan is immutable']);
  });

  test('NM-4.6 nodeSelector and drain change while Idle, not once the stage has left Idle', () => {
    expect(specTransitionErrors(idle, at('Idle', { ...otherSelector, drain: { evictionQPS: 5 } }))).toEqual([]);
    expect(specTransitionErrors(idle, at('Cordon', otherSelector))).toEqual([]);
    expect(specTransitionErrors(at('Cordon'), at('Drain', otherSelector))).toEqual(['spec.nodeSelector cannot change once the maintenance has left Idle']);
    expect(specTransitionErrors(at('Drain'), at('Drain', { drain: {} }))).toEqual(['spec.drain cannot change once the maintenance has left Idle']);
    expect(specTransitionErrors(at('Drain'), at('Complete', { reason: 'done' }))).toEqual([]);
  });
});

describe('NodeMaintenance CRD', () => {
  const def = CRDS.find((d) => d.kind === 'NodeMaintenance')!;
  type Manifest = { spec: { scope: string; names: Record<string, unknown>; versions: Array<{ subresources?: unknown; additionalPrinterColumns?: unknown; schema: { openAPIV3Schema: JsonSchema } }> } };
  const m = crdManifest(def) as Manifest;
  const spec = (m.spec.versions[0]!.schema.openAPIV3Schema.properties as Record<string, JsonSchema>).spec!;
  const prop = (s: JsonSchema, k: string) => (s.properties as Record<string, JsonSchema>)[k]!;

  test('NM-1.1 cluster-scoped, names, short name snm, category slipway, status subresource, printer columns', () => {
    expect(m.spec.scope).toBe('Cluster');
    expect(m.spec.names).toEqual({ kind: 'NodeMaintenance', listKind: 'NodeMaintenanceList', plural: 'nodemaintenances', singular: 'nodemaintenance', shortNames: ['snm'], categories: ['slipway'] });
    expect(m.spec.versions[0]!.subresources).toEqual({ status: {} });
    expect(m.spec.versions[0]!.additionalPrinterColumns).toMatchObject([
      { name: 'Stage', type: 'string', jsonPath: '.spec.stage' },
      { name: 'Drained', type: 'string', jsonPath: '.status.conditions[?(@.type=="Drained")].status' },
      { name: 'Nodes', type: 'integer', jsonPath: '.status.selectedNodes' },
      { name: 'Blocked', type: 'integer', jsonPath: '.status.drainStatus.podsBlocked' },
      { name: 'Done', type: 'integer', jsonPath: '.status.rollout.done' },
      { name: 'Failed', type: 'integer', jsonPath: '.status.rollout.failed' },
      { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
      { name: 'Reason', type: 'string', jsonPath: '.spec.reason', priority: 1 },
    ]);
  });

  test('NM-1.2 NM-1.3 the schema defaults stage to Idle and drainPlan to the 12 entries; nodeSelector is required', () => {
    expect(prop(spec, 'stage').default).toBe('Idle');
    expect(prop(spec, 'drainPlan').default).toEqual(DEFAULT_DRAIN_PLAN);
    expect(spec.required).toEqual(['nodeSelector']);
  });

  test('NM-4.4 the order rule compares each entry\'s integer key with the one before, naming the entry; the status fields are the spec\'s', () => {
    const rules = prop(spec, 'drainPlan')['x-kubernetes-validations'] as Array<{ rule: string; messageExpression: string }>;
    expect(rules[0]!.rule).toMatch(/^!self\.exists\(i, e, i > 0 && .*4294967296.*2147483648\) \* 2 \+ \(has\(self\[i - 1\]\.podSelector\) \? 0 : 1\) > .*\(has\(e\.podSelector\) \? 0 : 1\)\)$/);
    expect(rules[0]!.messageExpression).toMatch(/^'drainPlan\[' \+ \['0', '1', .*, '63'\]\[self\.transformList\(i, e, .*, i\)\[0\]\] \+ '\]: entries must be ordered/);
    const status = (m.spec.versions[0]!.schema.openAPIV3Schema.properties as Record<string, JsonSchema>).status!;
    expect(Object.keys(status.properties as object).sort()).toEqual(
      ['conditions', 'drainPlan', 'drainStatus', 'message', 'nodeStatuses', 'nodeStatusesOmitted', 'observedGeneration', 'rollout', 'runId', 'selectedNodes', 'stageStatuses', 'workflowId'],
    );
  });
});

describe('NodeMaintenance status schema', () => {
  test('keeps every field the workflow reports, under the same names (workflows/maintenance/types.ts)', () => {
    const lane = { podType: 'Default' as const, podPriority: 1000, podSelector: { matchLabels: { app: 'pg' } } };
    const counts = { podsPendingEvictionRequest: 1, activeEvictionRequests: 2, podsBlocked: 1, podsKept: 0 };
    const answer: MaintenanceStatus = {
      stage: 'Drain',
      stageStatuses: [{ name: 'Drain', startTimestamp: '2026-11-23T15:00:00Z' }],
      drainPlan: [lane, { podType: 'Static', podPriority: 2147483647 }],
      planIndex: 0,
      selectedNodes: 2,
      nodeStatuses: [{ nodeRef: { name: 'one' }, drainTargets: [lane], drainMessage: 'Draining (limited by b)', limitedBy: ['b'], ...counts }],
      nodeStatusesOmitted: 0,
      drainStatus: { reachedDrainTargets: [lane], drainMessage: 'Draining', ...counts },
      conditions: [{ type: 'Drained', status: 'False', reason: 'Draining', message: 'Draining' }],
      message: 'Draining',
      observedGeneration: 3,
      completed: false,
    };
    // What the bridge writes: the answer minus the workflow's own bookkeeping, conditions with a time.
    const { stage: _s, planIndex: _p, completed: _c, ...mirrored } = answer;
    const status = { ...mirrored, workflowId: 'nm/m/uid', runId: 'r', conditions: answer.conditions.map((c) => ({ ...c, lastTransitionTime: '2026-11-23T15:00:00Z' })) };
    expect(NodeMaintenanceStatus.parse(status)).toEqual(status);
  });
});

describe('NM-4.9 the nodes/delete policy', () => {
  test('a Deny-bound policy on create, update and delete of nodemaintenances, asking the authorizer for nodes/delete', () => {
    const [policy, binding] = POLICIES.filter((p) => (p.metadata as { name: string }).name === NODE_DELETE_POLICY) as Array<{ kind: string; spec: Record<string, unknown> }>;
    expect([policy!.kind, binding!.kind]).toEqual(['ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding']);
    expect(binding!.spec).toEqual({ policyName: NODE_DELETE_POLICY, validationActions: ['Deny'] });
    expect(policy!.spec).toMatchObject({
      failurePolicy: 'Fail',
      matchConstraints: { resourceRules: [{ apiGroups: ['slipway.dev'], apiVersions: ['v1alpha1'], operations: ['CREATE', 'UPDATE', 'DELETE'], resources: ['nodemaintenances'] }] },
      validations: [{ expression: "authorizer.group('').resource('nodes').check('delete').allowed()", reason: 'Forbidden' }],
    });
  });
});
