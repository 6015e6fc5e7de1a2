// Bad Evacuations and bad evacuator registrations, with the guard's real worker running.
// - An Evacuation (api/evacuation.ts) the CRD would not store is refused at admission naming the
//   field: created for real, aimed at a guard pod (its podRef), so one let through would be there
//   for an evacuator or a drain to act on; edits of the frozen fields and a bad status likewise.
// - A pod's `evacuator.slipway.dev/<name>: "<priority>"` annotation: a bad name is refused by the
//   apiserver with the pod (it is exactly an annotation key's name part). A bad priority is not ours
//   to refuse on the pod (the pod is the user's), so it is refused as a registration: a drain of the
//   pod's node names it in its status warnings, makes no Evacuation for it, and evicts the pod as
//   any other (an Evacuation names only the valid evacuators). Those pods run in a namespace and on
//   nodes of their own, outside the guard's.
// After each case the guard shows nothing was disrupted.
import { CustomObjectsApi, type V1Pod } from '@kubernetes/client-node';
import { apiStatus } from '../../kube/client.js';
import { EVACUATION } from '../../api/evacuation.js';
import { installCrds } from '../../starter/install-crds.js';
import { ensureFakeNodeGroup } from '../../stack/kwok/nodes.js';
import { drainWorkflow } from '../../workflows/index.js';
import { drainStatusQuery } from '../../workflows/messages.js';
import { admissionClient, causeFor, refusalText } from '../support/admission.js';
import { BAD_EVACUATIONS } from '../support/bad-evacuations.js';
import { createNamespace, deleteGroupNodes, isRunning, uniqueName } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';
import { Guard } from './guard.js';
import { mergePatch } from '../../kube/patch.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

const g = new Guard('bi-evac');
const custom = g.f.c.config.makeApiClient(CustomObjectsApi);
const admit = admissionClient(g.f.c.config);
const { group, version, plural, kind } = EVACUATION;
let target: V1Pod;
const otherGroups: string[] = [];
/** The annotated pods' namespace: the guard counts every eviction in its own. */
const podNs = uniqueName('bi-evac-pods');

beforeAll(async () => {
  await installCrds(g.f.c.config);
  await g.setup();
  target = (await g.f.c.core.listNamespacedPod({ namespace: g.f.ns, labelSelector: 'app=app' })).items[0]!;
  await createNamespace(g.f.c, podNs);
}, 120_000);
afterAll(async () => {
  for (const grp of otherGroups) await deleteGroupNodes(g.f.c, grp).catch(() => undefined);
  await g.f.c.core.deleteNamespace({ name: podNs }).catch(() => undefined);
  await g.teardown();
});

/** A valid Evacuation of the guard's pod (named by its uid, as Slipway names them). */
const spec = (): Record<string, unknown> => ({
  podRef: { name: target.metadata!.name!, uid: target.metadata!.uid! },
  requesters: [{ name: `drain/${g.nodes[0]}`, reason: 'bad-input' }],
  progressDeadlineSeconds: 60,
  evacuators: [{ name: 'db-operator', priority: 10 }],
});

/** The apiserver's answer to a create: 201, or the code and message of the refusal. */
async function create(name: string, s: unknown): Promise<{ code: number; message: string }> {
  try {
    await custom.createNamespacedCustomObject({ group, version, plural, namespace: g.f.ns, body: { apiVersion: `${group}/${version}`, kind, metadata: { name }, spec: s } });
    return { code: 201, message: '' };
  } catch (err) {
    const code = apiStatus(err);
    if (code === undefined) throw err;
    return { code, message: (JSON.parse(String((err as { body?: unknown }).body)) as { message?: string }).message ?? '' };
  }
}

async function refused(write: () => Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await write();
    return { code: 200, message: '' };
  } catch (err) {
    const code = apiStatus(err);
    if (code === undefined) throw err;
    return { code, message: (JSON.parse(String((err as { body?: unknown }).body)) as { message?: string }).message ?? '' };
  }
}

/** The corpus spec, aimed at the guard's pod (its name and uid) and node. */
const aimed = (c: unknown): unknown =>
  JSON.parse(
    JSON.stringify(c)
      .replaceAll('"it-adm-pod"', JSON.stringify(target.metadata!.name!))
      .replaceAll('"it-adm-uid"', JSON.stringify(target.metadata!.uid!))
      .replaceAll('drain/it-adm-node', `drain/${g.nodes[0]}`),
  );

describe('an Evacuation refused at admission, naming the exact field', () => {
  test.each(BAD_EVACUATIONS.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const m = await g.mark();
    const name = uniqueName('bi-evac');
    const a = await admit.evacuation(g.f.ns, name, aimed(c.spec), { store: true });
    if (a.code === 201) await custom.deleteNamespacedCustomObject({ group, version, plural, namespace: g.f.ns, name }).catch(() => undefined);
    expect(a.code).toBe(422);
    expect([causeFor(a, c), refusalText(a)]).toEqual([expect.anything(), refusalText(a)]);
    await g.untouched(m);
  });
});

describe('a stored Evacuation: frozen fields and its status refused, naming the field', () => {
  let name: string;
  beforeAll(async () => {
    name = uniqueName('bi-evac-stored');
    expect((await create(name, spec())).code).toBe(201);
  });
  const patch = (body: unknown) => () => custom.patchNamespacedCustomObject({ group, version, plural, namespace: g.f.ns, name, body }, mergePatch);
  const patchStatus = (body: unknown) => () => custom.patchNamespacedCustomObjectStatus({ group, version, plural, namespace: g.f.ns, name, body }, mergePatch);

  test.each([
    ['spec.podRef changed to another pod', () => patch({ spec: { podRef: { name: 'other', uid: 'other-uid' } } }), 'spec.podRef is immutable'],
    ['spec.evacuators changed (a priority raised)', () => patch({ spec: { evacuators: [{ name: 'db-operator', priority: 99 }] } }), 'spec.evacuators is immutable'],
    ['spec.evacuators removed', () => patch({ spec: { evacuators: null } }), 'spec.evacuators is immutable'],
    ['status.cancellationPolicy not Allow or Forbid', () => patchStatus({ status: { cancellationPolicy: 'Sometimes' } }), 'status.cancellationPolicy'],
    ['status.evacuators[].name not an evacuator name', () => patchStatus({ status: { evacuators: [{ name: 'db operator', completed: true }] } }), 'status.evacuators[0].name'],
    ['status.failedEvictions negative', () => patchStatus({ status: { failedEvictions: -1 } }), 'status.failedEvictions'],
  ] as const)('%s', async (_name, write, words) => {
    const m = await g.mark();
    const before = (await custom.getNamespacedCustomObject({ group, version, plural, namespace: g.f.ns, name })) as { metadata: { resourceVersion: string } };
    const a = await refused(write());
    expect(a.code).toBe(422);
    expect(a.message).toContain(words);
    const after = (await custom.getNamespacedCustomObject({ group, version, plural, namespace: g.f.ns, name })) as { metadata: { resourceVersion: string } };
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion); // nothing written
    await g.untouched(m);
  });
});

describe('a bad evacuator registration on a pod: refused as a registration, named in the drain\'s status, no Evacuation for it', () => {
  /** A node of its own (outside the guard's group) with one pod carrying these annotations; its drain; the drain's end status. */
  async function drainPodWith(annotations: Record<string, string>) {
    const grp = uniqueName('bi-evac-n');
    otherGroups.push(grp);
    const [node] = await ensureFakeNodeGroup(g.f.c.core, grp, 1);
    // A Deployment's pod (a bare pod would add the drain's "no controller" warning).
    const app = uniqueName('evac');
    await g.f.c.apps.createNamespacedDeployment({
      namespace: podNs,
      body: {
        metadata: { name: app },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app } },
          template: {
            metadata: { labels: { app }, annotations },
            spec: { nodeSelector: { [NODE_GROUP_LABEL]: grp }, terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: 'registry.invalid/app:1' }] },
          },
        },
      },
    });
    const pod = await waitFor('the pod running', async () => (await g.f.c.core.listNamespacedPod({ namespace: podNs, labelSelector: `app=${app}` })).items.find(isRunning), { timeoutMs: 30_000 });
    const handle = await g.f.client.workflow.start(drainWorkflow, { taskQueue: g.f.taskQueue, workflowId: uniqueName('bi-evac-drain'), args: [{ nodeName: node! }] });
    g.f.track(handle.workflowId);
    return { node: node!, pod, handle };
  }
  const evacuationOf = async (uid: string) => {
    try {
      return (await custom.getNamespacedCustomObject({ group, version, plural, namespace: podNs, name: uid })) as { spec: { evacuators: Array<{ name: string; priority: number }> } };
    } catch (err) {
      if (apiStatus(err) === 404) return undefined;
      throw err;
    }
  };

  test('a name that is not one: the apiserver refuses the pod itself (an evacuator name is exactly an annotation key\'s name part)', async () => {
    const m = await g.mark();
    const a = await refused(() =>
      g.f.c.core.createNamespacedPod({ namespace: podNs, body: { metadata: { name: uniqueName('evac'), annotations: { 'evacuator.slipway.dev/-db-operator-': '10' } }, spec: { containers: [{ name: 'c', image: 'registry.invalid/app:1' }] } } }),
    );
    expect(a.code).toBe(422);
    expect(a.message).toContain('metadata.annotations: Invalid value: "evacuator.slipway.dev/-db-operator-"');
    expect((await g.f.c.core.listNamespacedPod({ namespace: podNs })).items.filter((p) => p.metadata?.annotations?.['evacuator.slipway.dev/-db-operator-'])).toEqual([]);
    await g.untouched(m);
  });

  test.each([
    ['a priority that is not an integer', { 'evacuator.slipway.dev/db-operator': 'high' }, 'priority "high" is not an integer from 0 to 100000'],
    ['a priority above 100000', { 'evacuator.slipway.dev/db-operator': '100001' }, 'priority "100001" is not an integer from 0 to 100000'],
    ['a priority not in canonical form', { 'evacuator.slipway.dev/db-operator': '+5' }, 'priority "+5" is not an integer from 0 to 100000'],
  ] as const)('%s: the pod is evicted instead, the drain says why', async (_name, annotations, words) => {
    const m = await g.mark();
    const { pod, handle } = await drainPodWith(annotations);
    const end = (await handle.result()).status;
    expect(end.phase).toBe('Drained');
    expect(end.warnings.map((w) => w.warning)).toEqual([expect.stringContaining(words)]);
    expect(end.warnings[0]!.warning).toContain('the pod is evicted instead');
    expect(end.warnings[0]!.pod).toBe(`${podNs}/${pod.metadata!.name}`);
    expect(await evacuationOf(pod.metadata!.uid!)).toBeUndefined();
    await g.untouched(m);
  });

  test('beside a valid one, the bad registration is ignored: the Evacuation names only the valid evacuator', async () => {
    const m = await g.mark();
    const { pod, handle } = await drainPodWith({ 'evacuator.slipway.dev/db-operator': '100', 'evacuator.slipway.dev/backup': '1e3' });
    try {
      const e = await waitFor('the Evacuation', () => evacuationOf(pod.metadata!.uid!), { timeoutMs: 30_000 });
      expect(e.spec.evacuators).toEqual([{ name: 'db-operator', priority: 100 }]);
      const s = await waitFor('the warning', async () => {
        const st = await handle.query(drainStatusQuery);
        return st.warnings.length ? st : undefined;
      }, { timeoutMs: 30_000 });
      expect(s.warnings.map((w) => w.warning)).toEqual(['evacuator.slipway.dev/backup: priority "1e3" is not an integer from 0 to 100000; ignored']);
      await g.untouched(m);
    } finally {
      await handle.terminate().catch(() => undefined);
    }
  });
});
