// deploy/bridge-rbac.yaml and deploy/worker-rbac.yaml on the local stack (which enforces RBAC):
// SubjectAccessReviews show each service account may do what its code does and not more; the
// worker's rules are derived from the activity sources (so a new API call fails here until the
// manifest grants it); and the bridge really runs with nothing but its service account's token.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AuthorizationV1Api, KubernetesObjectApi, PatchStrategy, RbacAuthorizationV1Api, loadAllYaml, type KubernetesObject } from '@kubernetes/client-node';
import { apiStatus } from '../../kube/client.js';
import type { CycleNodeRequestObject } from '../../starter/bridge/cycle/objects.js';
import type { CycleStatus } from '../../workflows/cycle/types.js';
import { BridgeFixture, kubeConfigWithToken, kubeFrom, validSpec } from '../support/bridge.js';
import { withSpecUnchecked } from '../support/admission.js';
import { uniqueName } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';
import { Maintenances, noNodes, scriptedMaintenancePath } from '../support/bridge-maintenance.js';
import { MAINTENANCE_FINALIZER } from '../../api/node-maintenance.js';
import { CYCLE_FINALIZER } from '../../api/cycle-node-request.js';
import { API_VERSION } from '../../api/names.js';

const SYSTEM_NS = 'slipway-system';
/** A bridge log line about a refused request (the line's timestamp is left out: "…46.403Z" is not a 403). */
const refused = (line: string) => /\b403\b|forbidden/i.test(line.replace(/^\S+ /, ''));
const f = new BridgeFixture('it-rbac');
const nm = new Maintenances(f);
const authz = f.c.config.makeApiClient(AuthorizationV1Api);

interface Perm {
  group: string;
  resource: string;
  subresource?: string;
  verb: string;
  namespace?: string;
  name?: string;
}
const permKey = (p: Perm) => `${p.group || 'core'}/${p.resource}${p.subresource ? `/${p.subresource}` : ''}:${p.verb}`;

async function can(sa: string, p: Perm): Promise<boolean> {
  const res = await authz.createSubjectAccessReview({
    body: {
      spec: {
        user: `system:serviceaccount:${SYSTEM_NS}:${sa}`,
        groups: ['system:serviceaccounts', `system:serviceaccounts:${SYSTEM_NS}`, 'system:authenticated'],
        resourceAttributes: { group: p.group, resource: p.resource, subresource: p.subresource, verb: p.verb, namespace: p.namespace, name: p.name },
      },
    },
  });
  return res.status?.allowed === true;
}

/** Server-side applies every document of a manifest (idempotent). */
async function applyManifest(path: string): Promise<KubernetesObject[]> {
  const api = KubernetesObjectApi.makeApiClient(f.c.config);
  const docs = loadAllYaml(readFileSync(path, 'utf8')) as KubernetesObject[];
  for (const d of docs) await api.patch(d, undefined, undefined, 'slipway-test', true, PatchStrategy.ServerSideApply);
  return docs;
}

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
  resourceNames?: string[];
}
/** Every group/resource:verb a manifest's ClusterRoles grant. */
function granted(docs: KubernetesObject[]): Set<string> {
  const out = new Set<string>();
  for (const d of docs) {
    if (d.kind !== 'ClusterRole') continue;
    for (const r of (d as unknown as { rules: Rule[] }).rules) {
      for (const g of r.apiGroups) for (const res of r.resources) for (const v of r.verbs) out.add(`${g}/${res}:${v}`);
    }
  }
  return out;
}

beforeAll(async () => {
  await f.setup();
  try {
    await f.c.core.createNamespace({ body: { metadata: { name: SYSTEM_NS } } });
  } catch (err) {
    if (apiStatus(err) !== 409) throw err;
  }
});
afterAll(() => f.teardown());

describe('the bridge service account', () => {
  let docs: KubernetesObject[];
  beforeAll(async () => {
    docs = await applyManifest('deploy/bridge-rbac.yaml');
  });

  const ns = 'some-team';
  const allowed: Perm[] = [
    { group: 'slipway.dev', resource: 'cyclenoderequests', verb: 'list' },
    { group: 'slipway.dev', resource: 'cyclenoderequests', verb: 'watch' },
    { group: 'slipway.dev', resource: 'cyclenoderequests', verb: 'get', namespace: ns },
    { group: 'slipway.dev', resource: 'cyclenoderequests', verb: 'patch', namespace: ns },
    { group: 'slipway.dev', resource: 'cyclenoderequests', subresource: 'status', verb: 'patch', namespace: ns },
    { group: 'slipway.dev', resource: 'cyclenodestatuses', verb: 'list' },
    { group: 'slipway.dev', resource: 'cyclenodestatuses', verb: 'watch' },
    { group: 'slipway.dev', resource: 'cyclenodestatuses', verb: 'create', namespace: ns },
    { group: 'slipway.dev', resource: 'cyclenodestatuses', subresource: 'status', verb: 'patch', namespace: ns },
    { group: 'slipway.dev', resource: 'nodemaintenances', verb: 'list' },
    { group: 'slipway.dev', resource: 'nodemaintenances', verb: 'watch' },
    { group: 'slipway.dev', resource: 'nodemaintenances', verb: 'get' },
    { group: 'slipway.dev', resource: 'nodemaintenances', verb: 'patch' },
    { group: 'slipway.dev', resource: 'nodemaintenances', subresource: 'status', verb: 'patch' },
    { group: 'slipway.dev', resource: 'nodedisruptionbudgets', verb: 'list' },
    { group: 'slipway.dev', resource: 'nodedisruptionbudgets', verb: 'watch' },
    { group: 'slipway.dev', resource: 'nodedisruptionbudgets', verb: 'get' },
    { group: 'slipway.dev', resource: 'nodedisruptionbudgets', subresource: 'status', verb: 'update' },
    { group: '', resource: 'nodes', verb: 'list' },
    // The Idle previews' feed (starter/bridge/maintenance/preview-feed.ts): one watch per kind.
    { group: '', resource: 'nodes', verb: 'watch' },
    { group: '', resource: 'pods', verb: 'list' },
    { group: '', resource: 'pods', verb: 'watch' },
    { group: 'policy', resource: 'poddisruptionbudgets', verb: 'list' },
    { group: 'policy', resource: 'poddisruptionbudgets', verb: 'watch' },
    { group: 'slipway.dev', resource: 'drainrules', verb: 'list' },
    { group: 'slipway.dev', resource: 'drainrules', verb: 'watch' },
    { group: '', resource: 'events', verb: 'create', namespace: ns },
    { group: '', resource: 'events', verb: 'create', namespace: 'default' },
    { group: 'coordination.k8s.io', resource: 'leases', verb: 'create', namespace: SYSTEM_NS },
    { group: 'coordination.k8s.io', resource: 'leases', verb: 'get', namespace: SYSTEM_NS, name: 'slipway-bridge' },
    { group: 'coordination.k8s.io', resource: 'leases', verb: 'update', namespace: SYSTEM_NS, name: 'slipway-bridge' },
  ];
  const denied: Perm[] = [
    { group: '', resource: 'nodes', verb: 'delete' },
    { group: '', resource: 'nodes', verb: 'patch' },
    { group: '', resource: 'pods', subresource: 'eviction', verb: 'create', namespace: ns },
    { group: '', resource: 'pods', verb: 'delete', namespace: ns },
    { group: '', resource: 'secrets', verb: 'get', namespace: ns },
    { group: '', resource: 'secrets', verb: 'list' },
    { group: 'slipway.dev', resource: 'cyclenoderequests', verb: 'update', namespace: ns },
    { group: 'slipway.dev', resource: 'cyclenoderequests', verb: 'delete', namespace: ns },
    { group: 'slipway.dev', resource: 'cyclenoderequests', verb: 'create', namespace: ns },
    { group: 'slipway.dev', resource: 'cyclenodestatuses', verb: 'delete', namespace: ns },
    { group: 'slipway.dev', resource: 'drainrules', verb: 'create' },
    { group: '', resource: 'pods', verb: 'get', namespace: ns },
    { group: 'policy', resource: 'poddisruptionbudgets', verb: 'get', namespace: ns },
    { group: 'slipway.dev', resource: 'nodemaintenances', verb: 'create' },
    { group: 'slipway.dev', resource: 'nodemaintenances', verb: 'delete' },
    { group: 'slipway.dev', resource: 'nodemaintenances', verb: 'update' },
    { group: 'slipway.dev', resource: 'nodedisruptionbudgets', verb: 'update' },
    { group: 'slipway.dev', resource: 'nodedisruptionbudgets', verb: 'delete' },
    { group: '', resource: 'nodes', verb: 'get' },
    { group: 'coordination.k8s.io', resource: 'leases', verb: 'update', namespace: SYSTEM_NS, name: 'someone-else' },
    { group: 'coordination.k8s.io', resource: 'leases', verb: 'get', namespace: 'kube-system', name: 'slipway-bridge' },
    { group: 'coordination.k8s.io', resource: 'leases', verb: 'delete', namespace: SYSTEM_NS, name: 'slipway-bridge' },
  ];

  test('the manifest declares the service account, the ClusterRole and the lease Role with their bindings', () => {
    expect(docs.map((d) => `${d.kind}/${d.metadata?.name}`)).toEqual([
      'ServiceAccount/slipway-bridge',
      'ClusterRole/slipway-bridge',
      'ClusterRoleBinding/slipway-bridge',
      'Role/slipway-bridge-leader-election',
      'RoleBinding/slipway-bridge-leader-election',
    ]);
  });

  test.each(allowed.map((p) => [permKey(p) + (p.name ? ` ${p.name}` : ''), p] as const))('may %s', async (_k, p) => {
    expect(await can('slipway-bridge', p)).toBe(true);
  });

  test.each(denied.map((p) => [permKey(p) + (p.name ? ` ${p.namespace}/${p.name}` : ''), p] as const))('may not %s', async (_k, p) => {
    expect(await can('slipway-bridge', p)).toBe(false);
  });

  test('runs with only its token: starts, records, mirrors, creates CycleNodeStatus, reports invalid specs, finalizes', async () => {
    const tq = uniqueName('it-rbac-tq');
    await f.scriptedWorker(tq);
    const tr = await f.c.core.createNamespacedServiceAccountToken({ name: 'slipway-bridge', namespace: SYSTEM_NS, body: { spec: { audiences: [], expirationSeconds: 3600 } } });
    const kube = kubeFrom(kubeConfigWithToken(tr.status!.token));
    // The lease where the Role allows it (its fixed name in slipway-system).
    const b = await f.bridge({ kube, taskQueue: tq, leaseNamespace: SYSTEM_NS, leaseName: 'slipway-bridge', tag: 'sa' });
    try {
      await waitFor('leads', async () => b.isLeader(), { timeoutMs: 40_000 });
      const good = uniqueName('cnr');
      const bad = uniqueName('cnr');
      await f.createCnr(good, validSpec('it-rbac-group'));
      // Stored past admission (as an older CRD would have let it in): the bridge must still judge it.
      await withSpecUnchecked(f.c.config, 'CycleNodeRequest', () => f.createCnr(bad, { nodeGroupName: 'g', selector: { matchLabels: { 'bad key!': 'x' } } }));
      const running = await waitFor('workflow recorded', async () => {
        const o = await f.getCnr(good);
        return o?.status?.workflowId ? o : undefined;
      });
      expect(running.metadata.finalizers).toContain(CYCLE_FINALIZER);
      const status: CycleStatus = { phase: 'CordoningNode', message: 'draining n1', nodes: [{ nodeName: 'n1', phase: 'DrainingPods', evicted: 1 }], nodesCycled: 0, nodesTotal: 1 };
      await f.client.workflow.getHandle(running.status!.workflowId!).signal('scriptStatus', status);
      await waitFor('mirrored', async () => (await f.getCnr(good))?.status?.phase === 'CordoningNode');
      await waitFor('CycleNodeStatus with status', async () => (await f.nodeStatuses()).some((s) => s.spec?.requestName === good && s.status?.phase === 'DrainingPods'));
      const invalid = await waitFor('invalid reported', async () => {
        const o: CycleNodeRequestObject | undefined = await f.getCnr(bad);
        return o?.status?.phase === 'Failed' ? o : undefined;
      });
      expect(invalid.status!.message).toContain('bad key!');
      await waitFor('InvalidSpec event', async () => (await f.events(bad)).some((e) => e.reason === 'InvalidSpec'));
      await f.deleteCnr(good);
      await waitFor('deleted after the workflow closed', async () => (await f.getCnr(good)) === undefined, { timeoutMs: 20_000 });
      expect(f.logs.filter(refused)).toEqual([]);
    } finally {
      await f.stopBridge(b);
    }
  });

  test('runs with only its token for NodeMaintenances: starts, mirrors, records Events, completes on deletion, finalizes', async () => {
    const tq = uniqueName('it-rbac-nm-tq');
    await f.scriptedWorker(tq, scriptedMaintenancePath());
    const tr = await f.c.core.createNamespacedServiceAccountToken({ name: 'slipway-bridge', namespace: SYSTEM_NS, body: { spec: { audiences: [], expirationSeconds: 3600 } } });
    const kube = kubeFrom(kubeConfigWithToken(tr.status!.token));
    const b = await f.bridge({ kube, taskQueue: tq, leaseNamespace: SYSTEM_NS, leaseName: 'slipway-bridge', tag: 'sa-nm', maintenances: true });
    const name = uniqueName('nm');
    try {
      await waitFor('leads', async () => b.isLeader(), { timeoutMs: 40_000 });
      await nm.create(name, { nodeSelector: noNodes, stage: 'Cordon', reason: 'rbac' });
      await waitFor('workflow recorded', async () => (await nm.get(name))?.status?.stageStatuses?.some((s) => s.name === 'Cordon'));
      await waitFor('StageStarted event', async () => (await nm.events(name)).some((e) => e.reason === 'StageStarted'));
      await nm.patch(name, { metadata: { finalizers: [MAINTENANCE_FINALIZER] } }); // as the workflow does when it leaves Idle
      await nm.delete(name);
      await waitFor('deleted once Complete has run', async () => (await nm.get(name)) === undefined, { timeoutMs: 20_000 });
      expect(f.logs.filter(refused)).toEqual([]);
    } finally {
      await f.stopBridge(b);
      await nm.cleanup();
    }
  });
});

// ---- the worker: rules derived from the activities' API calls ------------------------------------

const VERBS: Record<string, string> = { read: 'get', get: 'get', list: 'list', create: 'create', patch: 'patch', delete: 'delete', replace: 'update' };
/** client-node method kinds → [group, resource, subresource?]. */
const KINDS: Record<string, [string, string, string?]> = {
  Node: ['', 'nodes'],
  NodeStatus: ['', 'nodes', 'status'],
  Pod: ['', 'pods'],
  PodEviction: ['', 'pods', 'eviction'],
  Event: ['', 'events'],
  Namespace: ['', 'namespaces'],
  PersistentVolume: ['', 'persistentvolumes'],
  DaemonSet: ['apps', 'daemonsets'],
  PodDisruptionBudget: ['policy', 'poddisruptionbudgets'],
  VolumeAttachment: ['storage.k8s.io', 'volumeattachments'],
};

/** Custom objects: the kind a file's calls address is the one whose constant it names (`DRAIN_RULE.plural`, `NODE_GROUP.plural`, `NODE_DISRUPTION_BUDGET.plural`, ...). */
const CUSTOM_KINDS: Record<string, string> = { DRAIN_RULE: 'drainrules', NODE_MAINTENANCE: 'nodemaintenances', EVACUATION: 'evacuations', NODE_GROUP: 'nodegroups', CYCLE_NODE_REQUEST: 'cyclenoderequests', NODE_DISRUPTION_BUDGET: 'nodedisruptionbudgets' };

const CLUSTER_SCOPED = new Set(['nodes', 'namespaces', 'persistentvolumes', 'volumeattachments', 'drainrules', 'nodemaintenances', 'nodegroups', 'nodedisruptionbudgets']);

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((e) => {
    const p = join(dir, e);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** activities/**, plus every file they import at run time (not `import type`), transitively. */
function activityCode(): string[] {
  const seen = new Set<string>();
  const todo = sources('activities');
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (seen.has(file) || !existsSync(file)) continue;
    seen.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(/^import (?!type )[^;]*?from '(\.{1,2}\/[^']+)\.js';/gms)) {
      todo.push(join(dirname(file), `${m[1]}.ts`));
    }
  }
  return [...seen].sort();
}

/** group/resource:verb for every Kubernetes call the activities' code makes, and the calls it cannot map. */
function workerNeeds(): { needs: Set<string>; unmapped: string[] } {
  const needs = new Set<string>();
  const unmapped: string[] = [];
  for (const file of activityCode()) {
    // Watched paths are written `/apis/${API_VERSION}/<resource>`: read them with the constant's value.
    const src = readFileSync(file, 'utf8').replaceAll('${API_VERSION}', API_VERSION);
    const customKinds = [...new Set([...src.matchAll(/\b([A-Z_]+)\.plural\b/g)].map((m) => CUSTOM_KINDS[m[1]!]).filter((r): r is string => !!r))];
    for (const m of src.matchAll(/\b(?:core|apps|storage|policy|batch|coordination|custom|api)\.(read|get|list|create|patch|delete|replace)(\w+)\(/g)) {
      const kind = m[2]!.replace('Namespaced', '').replace('ForAllNamespaces', '');
      const custom = /^(Cluster)?CustomObject(Status)?$/.exec(kind);
      const k: [string, string, string?] | undefined = custom
        ? customKinds.length === 1
          ? ['slipway.dev', customKinds[0]!, custom[2] ? 'status' : undefined]
          : undefined
        : KINDS[kind];
      if (!k) unmapped.push(`${file}: ${m[1]}${m[2]}`);
      else needs.add(`${k[0]}/${k[1]}${k[2] ? `/${k[2]}` : ''}:${VERBS[m[1]!]}`);
    }
    // Watches (kube/watch.ts) name their collection by path.
    for (const m of src.matchAll(/path:\s*['"`](\/apis?\/[^'"`]+)['"`]/g)) {
      const parts = m[1]!.split('/').filter(Boolean); // api v1 pods | apis group v1 resource
      const [group, resource] = parts[0] === 'api' ? ['', parts[2]!] : [parts[1]!, parts[3]!];
      needs.add(`${group}/${resource}:watch`);
    }
  }
  return { needs, unmapped };
}

describe('the worker service account', () => {
  let docs: KubernetesObject[];
  beforeAll(async () => {
    docs = await applyManifest('deploy/worker-rbac.yaml');
  });

  test('every Kubernetes call of the activities is known to this test', () => {
    // The kwok provider creates replacement Nodes through kwok-node.ts (ensureNode): counted.
    expect(activityCode()).toContain(join('activities', 'providers', 'kwok-node.ts'));
    expect(workerNeeds().unmapped).toEqual([]);
  });

  test('the ClusterRole grants exactly what the activities call', () => {
    expect([...granted(docs)].sort()).toEqual([...workerNeeds().needs].sort());
  });

  test('SubjectAccessReviews agree: each call allowed, a sample of others refused', async () => {
    for (const need of workerNeeds().needs) {
      const [path, verb] = need.split(':') as [string, string];
      const [group, resource, subresource] = path.split('/') as [string, string, string?];
      const p: Perm = { group, resource, subresource, verb, namespace: CLUSTER_SCOPED.has(resource) ? undefined : 'team-a' };
      expect([need, await can('slipway-worker', p)]).toEqual([need, true]);
    }
    for (const p of [
      { group: '', resource: 'secrets', verb: 'get', namespace: 'team-a' },
      { group: '', resource: 'nodes', verb: 'update' },
      { group: '', resource: 'pods', verb: 'create', namespace: 'team-a' },
      { group: '', resource: 'pods', verb: 'update', namespace: 'team-a' },
      { group: '', resource: 'namespaces', verb: 'delete' },
      { group: 'apps', resource: 'deployments', verb: 'update', namespace: 'team-a' },
      { group: 'slipway.dev', resource: 'drainrules', verb: 'create' },
      { group: 'slipway.dev', resource: 'cyclenoderequests', subresource: 'status', verb: 'patch', namespace: 'team-a' },
    ] as Perm[]) {
      expect([permKey(p), await can('slipway-worker', p)]).toEqual([permKey(p), false]);
    }
  });
});

describe('the roles users are granted (deploy/user-rbac.yaml): the trust boundary', () => {
  const users = { viewer: uniqueName('it-viewer'), editor: uniqueName('it-editor'), nsEditor: uniqueName('it-ns-editor'), evacuator: uniqueName('it-evacuator') };
  const ns = 'some-team';
  const rbac = () => f.c.config.makeApiClient(RbacAuthorizationV1Api);
  const bindings: string[] = [];
  async function bind(user: string, role: string, namespace?: string): Promise<void> {
    const body = { metadata: { name: user }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role }, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: user }] };
    if (namespace) await rbac().createNamespacedRoleBinding({ namespace, body });
    else await rbac().createClusterRoleBinding({ body });
    bindings.push(namespace ? `${namespace}/${user}` : user);
  }
  async function userCan(user: string, p: Perm): Promise<boolean> {
    const res = await authz.createSubjectAccessReview({
      body: { spec: { user, groups: ['system:authenticated'], resourceAttributes: { group: p.group, resource: p.resource, subresource: p.subresource, verb: p.verb, namespace: p.namespace, name: p.name } } },
    });
    return res.status?.allowed === true;
  }

  beforeAll(async () => {
    await applyManifest('deploy/user-rbac.yaml');
    await f.c.core.createNamespace({ body: { metadata: { name: ns } } }).catch((err: unknown) => {
      if (apiStatus(err) !== 409) throw err;
    });
    await bind(users.viewer, 'slipway-view');
    await bind(users.editor, 'slipway-edit');
    await bind(users.nsEditor, 'edit', ns); // a namespace's ordinary editor
    await bind(users.evacuator, 'slipway-evacuator');
    // slipway-edit's rules are filled in by the controller-manager's aggregation controller.
    await waitFor('slipway-edit aggregated', async () => ((await rbac().readClusterRole({ name: 'slipway-edit' })).rules ?? []).length >= 3, { timeoutMs: 30_000 });
    // ... and the built-in view (then edit, which includes view) takes slipway-view's rules, eventually.
    await waitFor('view aggregated into edit', () => userCan(users.nsEditor, { group: 'slipway.dev', resource: 'cyclenoderequests', verb: 'list', namespace: ns }), { timeoutMs: 60_000 });
  });
  afterAll(async () => {
    for (const b of bindings) {
      const [namespace, name] = b.includes('/') ? b.split('/') : [undefined, b];
      if (namespace) await rbac().deleteNamespacedRoleBinding({ namespace, name: name! }).catch(() => undefined);
      else await rbac().deleteClusterRoleBinding({ name: name! }).catch(() => undefined);
    }
  });

  const S = 'slipway.dev';
  const cases: Array<[keyof typeof users, Perm, boolean]> = [
    ['viewer', { group: S, resource: 'nodemaintenances', verb: 'list' }, true],
    ['viewer', { group: S, resource: 'cyclenoderequests', verb: 'watch', namespace: ns }, true],
    ['viewer', { group: S, resource: 'evacuations', verb: 'get', namespace: ns }, true],
    ['viewer', { group: S, resource: 'nodemaintenances', verb: 'create' }, false],
    ['viewer', { group: S, resource: 'cyclenoderequests', verb: 'create', namespace: ns }, false],
    ['editor', { group: S, resource: 'nodemaintenances', verb: 'create' }, true],
    ['editor', { group: S, resource: 'cyclenoderequests', verb: 'create', namespace: ns }, true],
    ['editor', { group: S, resource: 'drainrules', verb: 'delete' }, true],
    ['editor', { group: S, resource: 'nodemaintenances', verb: 'list' }, true], // edit includes view
    ['editor', { group: S, resource: 'nodemaintenances', subresource: 'status', verb: 'patch' }, false], // status is Slipway's
    ['editor', { group: S, resource: 'evacuations', verb: 'create', namespace: ns }, false],
    ['editor', { group: '', resource: 'nodes', verb: 'patch' }, false],
    // The trust boundary: a namespace's editor may not ask for node disruption, but may read requests (aggregated into view).
    ['nsEditor', { group: S, resource: 'cyclenoderequests', verb: 'create', namespace: ns }, false],
    ['nsEditor', { group: S, resource: 'cyclenoderequests', verb: 'list', namespace: ns }, true],
    ['nsEditor', { group: S, resource: 'nodemaintenances', verb: 'create' }, false],
    ['evacuator', { group: S, resource: 'evacuations', verb: 'watch', namespace: ns }, true],
    ['evacuator', { group: S, resource: 'evacuations', subresource: 'status', verb: 'patch', namespace: ns }, true],
    ['evacuator', { group: S, resource: 'evacuations', verb: 'patch', namespace: ns }, false],
    ['evacuator', { group: S, resource: 'evacuations', verb: 'delete', namespace: ns }, false],
  ];
  test.each(cases.map(([who, p, ok]) => [`${who} ${ok ? 'may' : 'may not'} ${permKey(p)}${p.namespace ? ` in ${p.namespace}` : ''}`, who, p, ok] as const))('%s', async (_t, who, p, ok) => {
    expect(await userCan(users[who], p)).toBe(ok);
  });
});
