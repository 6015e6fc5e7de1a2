// NodeMaintenance admission on the real apiserver (the zod half: test/unit/node-maintenance-admission.test.ts):
// each valid spec of the corpus is admitted (the bad ones: test/bad-input/node-maintenance.test.ts);
// defaults read back as the spec says (NM-1.2–1.4); the transition rules refuse a stage going back
// and edits to frozen fields (NM-2.1, NM-4.6); a user who may not delete Nodes may not write a
// NodeMaintenance (NM-4.9). Every object selects no node, so nothing acts on it.
import { CustomObjectsApi, KubeConfig, RbacAuthorizationV1Api, setHeaderOptions } from '@kubernetes/client-node';
import { loadKubeConfig } from '../../kube/client.js';
import { DEFAULT_DRAIN_PLAN } from '../../api/drain-plan.js';
import { NODE_MAINTENANCE } from '../../api/node-maintenance.js';
import { installCrds } from '../../starter/install-crds.js';
import { admissionClient, type Admission } from '../support/admission.js';
import { nm, VALID_NODE_MAINTENANCES } from '../support/bad-node-maintenances.js';
import { uniqueName } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';
import { mergePatch } from '../../kube/patch.js';
import { ALLOW_ALL_NODES_ANNOTATION } from '../../api/names.js';

const kc = loadKubeConfig();
const admit = admissionClient(kc);
const custom = kc.makeApiClient(CustomObjectsApi);
const where = { group: NODE_MAINTENANCE.group, version: NODE_MAINTENANCE.version, plural: NODE_MAINTENANCE.plural };
const created: string[] = [];

type Stored = { spec: { stage: string; drainPlan: unknown[]; reason?: string; nodeSelector: unknown } };
const read = async (name: string) => (await custom.getClusterCustomObject({ ...where, name })) as Stored;

/** Stores a NodeMaintenance (deleted after the file) and returns its name. */
async function store(spec: unknown): Promise<string> {
  const name = uniqueName('it-adm-nm');
  const a = await admit.nodeMaintenance(name, spec, { store: true });
  expect([a.code, a.message]).toEqual([201, '']);
  created.push(name);
  return name;
}

/** The refusal's causes as "field: message" lines (for a readable failure). */
const said = (a: Admission) => a.causes.map((c) => `${c.field}: ${c.message}`);

beforeAll(async () => {
  await installCrds(kc);
});

afterAll(async () => {
  for (const name of created) await custom.deleteClusterCustomObject({ ...where, name }).catch(() => undefined);
});

describe('NodeMaintenance corpus, apiserver side', () => {
  test.each(VALID_NODE_MAINTENANCES.map((c) => [c.name, c] as const))('admits %s', async (_name, c) => {
    const a = await admit.nodeMaintenance(uniqueName('it-adm-nm'), c.spec);
    expect([a.code, a.message]).toEqual([201, '']);
  });
});

describe('NM-1.1 the kind as kubectl shows it', () => {
  test('kubectl get snm (the server-side table): Stage, Drained from the condition, Nodes, Blocked (#24.6), Age; Reason only with -o wide', async () => {
    const name = await store(nm({ stage: 'Drain', reason: 'kernel upgrade' }));
    const condition = { type: 'Drained', status: 'True', reason: 'Drained', message: 'Drained', lastTransitionTime: new Date().toISOString() };
    await custom.patchClusterCustomObjectStatus({ ...where, name, body: { status: { selectedNodes: 3, conditions: [condition], drainStatus: { podsBlocked: 2 } } } }, mergePatch);
    type Table = { columnDefinitions: Array<{ name: string; priority: number }>; rows: Array<{ cells: unknown[] }> };
    const table = (await custom.getClusterCustomObject({ ...where, name }, setHeaderOptions('Accept', 'application/json;as=Table;v=v1;g=meta.k8s.io'))) as Table;
    const cols = table.columnDefinitions.map((c) => `${c.name}${c.priority ? ' (wide)' : ''}`);
    expect(cols).toEqual(['Name', 'Stage', 'Drained', 'Nodes', 'Blocked', 'Done', 'Failed', 'Age', 'Reason (wide)']);
    expect(table.rows[0]!.cells.filter((_, i) => i < 5 || i > 7)).toEqual([name, 'Drain', 'True', 3, 2, 'kernel upgrade']);
  });
});

describe('NodeMaintenance defaults, read back from the apiserver', () => {
  test('NM-1.2 NM-1.3 created without stage and drainPlan: stage Idle and the 12 default entries in order', async () => {
    const obj = await read(await store(nm()));
    expect(obj.spec.stage).toBe('Idle');
    expect(obj.spec.drainPlan).toEqual(DEFAULT_DRAIN_PLAN);
  });

  test('NM-1.4 an entry without podType reads back as Default; the written plan stays as written (NM-1.5)', async () => {
    const obj = await read(await store(nm({ drainPlan: [{ podPriority: 5000 }, { podPriority: 15000 }, { podType: 'DaemonSet', podPriority: 3000 }] })));
    expect(obj.spec.drainPlan).toEqual([
      { podType: 'Default', podPriority: 5000 },
      { podType: 'Default', podPriority: 15000 },
      { podType: 'DaemonSet', podPriority: 3000 },
    ]);
  });
});

describe('NodeMaintenance transitions (CEL transition rules)', () => {
  const selector2 = { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: ['it-adm-no-such-node-2'] }] }] };

  /** Asserts a refused patch: 422 with a cause for `field` that says `words`. */
  const refused = (a: Admission, field: string, words: string) => {
    expect(a.code).toBe(422);
    expect([a.causes.find((c) => c.field === field && (c.message ?? '').includes(words)), said(a)]).toEqual([expect.anything(), said(a)]);
  };

  test('NM-2.1 the stage moves forward (skips allowed) and never back; Complete is terminal', async () => {
    const name = await store(nm());
    expect((await admit.patchNodeMaintenance(name, { spec: { stage: 'Cordon' } })).code).toBe(201);
    expect((await admit.patchNodeMaintenance(name, { spec: { stage: 'Cordon' } })).code).toBe(201);
    expect((await admit.patchNodeMaintenance(name, { spec: { stage: 'Drain' } })).code).toBe(201);
    refused(await admit.patchNodeMaintenance(name, { spec: { stage: 'Cordon' } }), 'spec.stage', 'spec.stage cannot go back from Drain to Cordon');
    refused(await admit.patchNodeMaintenance(name, { spec: { stage: 'Idle' } }), 'spec.stage', 'spec.stage cannot go back from Drain to Idle');
    expect((await admit.patchNodeMaintenance(name, { spec: { stage: 'Complete' } })).code).toBe(201);
    refused(await admit.patchNodeMaintenance(name, { spec: { stage: 'Drain' } }), 'spec.stage', 'spec.stage cannot go back from Complete to Drain');
    expect((await read(name)).spec.stage).toBe('Complete');
  });

  test('NM-2.1 Idle straight to Complete is allowed', async () => {
    const name = await store(nm());
    expect((await admit.patchNodeMaintenance(name, { spec: { stage: 'Complete' } })).code).toBe(201);
  });

  test('NM-4.6 drainPlan is immutable, even while Idle; removing it is an edit too', async () => {
    const name = await store(nm({ drainPlan: [{ podPriority: 1000 }] }));
    refused(await admit.patchNodeMaintenance(name, { spec: { drainPlan: [{ podPriority: 2000 }] } }), 'spec.drainPlan', 'spec.drainPlan is immutable');
    refused(await admit.patchNodeMaintenance(name, { spec: { drainPlan: null } }), 'spec.drainPlan', 'spec.drainPlan is immutable');
    expect((await read(name)).spec.drainPlan).toEqual([{ podType: 'Default', podPriority: 1000 }]);
  });

  test('NM-4.6 nodeSelector and drain change while Idle (and in the edit that leaves Idle)', async () => {
    const name = await store(nm());
    expect((await admit.patchNodeMaintenance(name, { spec: { nodeSelector: selector2, drain: { evictionQPS: 5 } } })).code).toBe(201);
    expect((await admit.patchNodeMaintenance(name, { spec: { stage: 'Cordon', nodeSelector: nm().nodeSelector } })).code).toBe(201);
    expect((await read(name)).spec).toMatchObject({ stage: 'Cordon', nodeSelector: nm().nodeSelector });
  });

  test('NM-4.6 once the stage has left Idle, nodeSelector and drain are frozen; reason and stage still move', async () => {
    const name = await store(nm({ stage: 'Cordon' }));
    refused(await admit.patchNodeMaintenance(name, { spec: { nodeSelector: selector2 } }), 'spec.nodeSelector', 'spec.nodeSelector cannot change once the maintenance has left Idle');
    refused(await admit.patchNodeMaintenance(name, { spec: { drain: { evictionQPS: 5 } } }), 'spec.drain', 'spec.drain cannot change once the maintenance has left Idle');
    refused(await admit.patchNodeMaintenance(name, { spec: { stage: 'Drain', nodeSelector: selector2 } }), 'spec.nodeSelector', 'spec.nodeSelector cannot change once the maintenance has left Idle');
    expect((await admit.patchNodeMaintenance(name, { spec: { stage: 'Drain', reason: 'firmware' } })).code).toBe(201);
    expect((await read(name)).spec).toMatchObject({ stage: 'Drain', reason: 'firmware', nodeSelector: nm().nodeSelector });
  });
});

describe('NM-4.9 writing a NodeMaintenance needs nodes/delete (ValidatingAdmissionPolicy with the authorizer)', () => {
  const rbac = kc.makeApiClient(RbacAuthorizationV1Api);
  const role = uniqueName('it-adm-nm');
  const nmOnly = `${role}-nm-only`;
  const deleter = `${role}-node-deleter`;
  /** The test's own client, impersonating `user` (RBAC decides what the user may do). */
  const as = (user: string) => {
    const k = new KubeConfig();
    k.loadFromClusterAndUser(kc.getCurrentCluster()!, { ...kc.getCurrentUser()!, impersonateUser: user });
    return admissionClient(k);
  };
  const bind = (name: string, user: string, roleName: string) =>
    rbac.createClusterRoleBinding({ body: { metadata: { name }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: roleName }, subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: user }] } });

  beforeAll(async () => {
    await rbac.createClusterRole({ body: { metadata: { name: role }, rules: [{ apiGroups: [NODE_MAINTENANCE.group], resources: [NODE_MAINTENANCE.plural], verbs: ['get', 'create', 'update', 'patch', 'delete'] }] } });
    await rbac.createClusterRole({ body: { metadata: { name: `${role}-nodes` }, rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['delete'] }] } });
    await bind(nmOnly, nmOnly, role);
    await bind(deleter, deleter, role);
    await bind(`${deleter}-nodes`, deleter, `${role}-nodes`);
    // RBAC and a new policy take effect once the apiserver's informers have them.
    await waitFor('the node deleter to be admitted', async () => (await as(deleter).nodeMaintenance(uniqueName('it-adm-nm'), nm())).code === 201, { timeoutMs: 30_000 });
    await waitFor('the policy to refuse the nodemaintenances-only user', async () => (await as(nmOnly).nodeMaintenance(uniqueName('it-adm-nm'), nm())).code === 403, { timeoutMs: 30_000 });
  });

  afterAll(async () => {
    for (const name of [nmOnly, deleter, `${deleter}-nodes`]) await rbac.deleteClusterRoleBinding({ name }).catch(() => undefined);
    for (const name of [role, `${role}-nodes`]) await rbac.deleteClusterRole({ name }).catch(() => undefined);
  });

  test('create by a user with RBAC on nodemaintenances only: 403 naming the user and the missing nodes/delete', async () => {
    const name = uniqueName('it-adm-nm');
    const a = await as(nmOnly).nodeMaintenance(name, nm());
    expect([a.code, a.message]).toEqual([403, expect.stringContaining(`NodeMaintenance ${name}: user ${nmOnly} may not delete nodes (nodes/delete)`)]);
  });

  test('the same user with nodes/delete as well: admitted', async () => {
    expect((await as(deleter).nodeMaintenance(uniqueName('it-adm-nm'), nm())).code).toBe(201);
  });

  test('update and delete by the nodemaintenances-only user: 403; a label-only update passes (bookkeeping)', async () => {
    const name = await store(nm());
    const user = as(nmOnly);
    const edit = await user.patchNodeMaintenance(name, { spec: { stage: 'Cordon' } });
    expect([edit.code, edit.message]).toEqual([403, expect.stringContaining('may not delete nodes (nodes/delete)')]);
    const ack = await user.patchNodeMaintenance(name, { metadata: { annotations: { [ALLOW_ALL_NODES_ANNOTATION]: 'true' } } });
    expect(ack.code).toBe(403);
    expect((await user.patchNodeMaintenance(name, { metadata: { labels: { team: 'it' } } })).code).toBe(201);
    const del = await user.deleteNodeMaintenance(name);
    expect([del.code, del.message]).toEqual([403, expect.stringContaining(`NodeMaintenance ${name}: user ${nmOnly} may not delete nodes`)]);
    expect((await read(name)).spec.stage).toBe('Idle');
  });
});
