// Bad DrainRules: refused at admission naming the field (stored for real, so one let through would
// be in force); a second rule of one name is refused whatever namespace it is sent with (the kind
// is cluster-scoped); a bad rule already stored holds only the drains it could affect, naming it,
// before anything is cordoned or evicted. After each, the guard shows nothing was disrupted.
import { setTimeout as sleep } from 'node:timers/promises';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { apiStatus } from '../../kube/client.js';
import { DRAIN_RULE } from '../../api/drain-rule.js';
import { installCrds } from '../../starter/install-crds.js';
import { drainWorkflow } from '../../workflows/index.js';
import { drainStatusQuery } from '../../workflows/messages.js';
import { admissionClient, causeFor } from '../support/admission.js';
import { BAD_DRAIN_RULES } from '../support/bad-drain-rules.js';
import { uniqueName } from '../support/cluster.js';
import { deleteDrainRule, storeUnvalidatedDrainRule } from '../support/drain-rules.js';
import { waitFor } from '../support/wait.js';
import { Guard } from './guard.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

const g = new Guard('bi-rule');
const admit = admissionClient(g.f.c.config);
const custom = g.f.c.config.makeApiClient(CustomObjectsApi);
const where = { group: DRAIN_RULE.group, version: DRAIN_RULE.version, plural: DRAIN_RULE.plural };
const stored: string[] = [];

beforeAll(async () => {
  await installCrds(g.f.c.config);
  await g.setup();
}, 120_000);
afterAll(async () => {
  for (const name of stored) await deleteDrainRule(g.f.c, name).catch(() => undefined);
  await g.teardown();
});

/** Aimed at the guard: every nodes entry selects the guard's node group too. */
const aimed = (spec: unknown): unknown => {
  const s = JSON.parse(JSON.stringify(spec)) as { nodes?: Array<{ selector?: { matchLabels?: Record<string, string> } }> };
  for (const n of s.nodes ?? []) if (n?.selector && typeof n.selector === 'object') n.selector.matchLabels = { ...n.selector.matchLabels, [NODE_GROUP_LABEL]: g.group };
  return s;
};

describe('refused at admission, naming the field', () => {
  test.each(BAD_DRAIN_RULES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const m = await g.mark();
    const name = uniqueName('bi-rule');
    const a = await admit.drainRule(name, aimed(c.spec), { store: true });
    if (a.code === 201) stored.push(name);
    expect(a.code).toBe(422);
    expect([causeFor(a, c), a.message]).toEqual([expect.anything(), a.message]);
    await g.untouched(m);
  });
});

describe('accepted or stored, and nothing disrupted', () => {
  test('two rules of one name "in different namespaces": the kind is cluster-scoped, the second is refused as already existing, the first stays', async () => {
    const m = await g.mark();
    const name = uniqueName('bi-rule-twice');
    const body = (namespace: string, behavior: string) => ({
      apiVersion: `${DRAIN_RULE.group}/${DRAIN_RULE.version}`, kind: DRAIN_RULE.kind, metadata: { name, namespace },
      spec: { drain: { behavior }, pods: [{ selector: { matchLabels: { app: 'app' } } }] },
    });
    await custom.createClusterCustomObject({ ...where, body: body('team-a', 'Skip') });
    stored.push(name);
    const second = await custom.createClusterCustomObject({ ...where, body: body('team-b', 'Drain') }).then(() => 201, (err: unknown) => apiStatus(err));
    expect(second).toBe(409);
    const kept = (await custom.getClusterCustomObject({ ...where, name })) as { metadata: { namespace?: string }; spec: { drain: { behavior: string } } };
    expect(kept.spec.drain.behavior).toBe('Skip');
    expect(kept.metadata.namespace ?? '').toBe('');
    // Nor can it be reached as a namespaced object.
    const namespaced = await custom.getNamespacedCustomObject({ ...where, namespace: 'team-b', name }).then(() => 200, (err: unknown) => apiStatus(err));
    expect(namespaced).toBe(404);
    await g.untouched(m);
  });

  test('a bad rule stored before admission checked it (an upgrade) holds a drain of the nodes it could affect, naming it, before any cordon or eviction', async () => {
    const name = uniqueName('bi-rule-stored');
    await storeUnvalidatedDrainRule(g.f.c, name, {
      drain: { behavior: 'Skip' },
      nodes: [{ selector: { matchLabels: { [NODE_GROUP_LABEL]: g.group } } }],
      pods: [{ selector: { matchExpressions: [{ key: 'app', operator: 'Like', values: ['app'] }] } }],
    });
    stored.push(name);
    const m = await g.mark();
    // A node with the app's pods: on one without pods the rule could decide nothing, and the drain rightly goes on.
    const node = await g.nodeWithAppPods();
    const handle = await g.f.client.workflow.start(drainWorkflow, { taskQueue: g.f.taskQueue, workflowId: uniqueName('bi-drain'), args: [{ nodeName: node }] });
    g.f.track(handle.workflowId);
    try {
      const held = await waitFor('the drain held', async () => {
        const s = await handle.query(drainStatusQuery);
        return s.heldBy.length ? s : undefined;
      }, { timeoutMs: 30_000 });
      expect(held.heldBy[0]).toContain(`DrainRule ${name} is invalid`);
      expect(held.heldBy[0]).toContain('spec.pods[0].selector.matchExpressions[0].operator');
      await sleep(3000);
      await g.untouched(m);
    } finally {
      await handle.terminate().catch(() => undefined);
      await deleteDrainRule(g.f.c, name);
    }
  });
});
