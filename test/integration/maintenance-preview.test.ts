// The Idle preview on the local stack (NM-2.2): the maintenance workflow, while Idle, reads the
// selected nodes' pods, DrainRule-free classification, and today's PDBs, and shows per node which pods
// Drain would evict in which plan entry, which it skips and why, and which a PDB blocks, all without
// a single write (judged from the apiserver's audit log).
import { createPreviewActivities } from '../../activities/maintenance/preview.js';
import { entryString, type PlanEntry } from '../../api/drain-plan.js';
import https from 'node:https';
import { byControlPlane, testCluster } from '../support/cluster.js';
import { maintenancePlanQuery } from '../../workflows/messages.js';
import { appOf, MaintenanceFixture } from '../support/maintenance.js';
import { waitFor } from '../support/wait.js';
import { DRAIN_RULE } from '../../api/drain-rule.js';
import { GROUP, VERSION } from '../../api/crd.js';
import { NODE_MAINTENANCE } from '../../api/node-maintenance.js';
import type { MaintenanceStatus } from '../../workflows/maintenance/types.js';
import { run } from '../../starter/cli/main.js';
import { startBridge, type RunningBridge } from '../../starter/bridge/main.js';
import { uniqueName } from '../support/cluster.js';
// run() loads these on demand; jest's ESM loader needs them loaded up front.
import '../../starter/cli/commands.js';
import '../../starter/cli/session.js';
import '../../starter/cli/explain.js';
import { DRAIN_LABEL } from '../../api/drain-plan.js';

/** Open cluster-wide WATCH requests on pods and PDBs, from the apiserver's own gauge. */
async function clusterWatches(): Promise<{ pods: number; pdbs: number }> {
  const kc = testCluster().config;
  const server = new URL(kc.getCurrentCluster()!.server);
  const opts: https.RequestOptions = { hostname: server.hostname, port: server.port, path: '/metrics', method: 'GET' };
  await kc.applyToHTTPSOptions(opts);
  const body = await new Promise<string>((resolve, reject) => {
    https.get(opts, (r) => {
      let d = '';
      r.on('data', (c: Buffer) => (d += c.toString()));
      r.on('end', () => resolve(d));
    }).on('error', reject);
  });
  const gauge = (resource: string) => Number(new RegExp(`^apiserver_longrunning_requests\\{[^}]*resource="${resource}",scope="cluster",subresource="",verb="WATCH"[^}]*\\} (\\d+)`, 'm').exec(body)?.[1] ?? 0);
  return { pods: gauge('pods'), pdbs: gauge('poddisruptionbudgets') };
}

const selectNodes = (...names: string[]) => ({ nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name' as const, operator: 'In' as const, values: names }] }] });
const D = (podPriority: number, podSelector?: { matchLabels: Record<string, string> }) => ({ podType: 'Default' as const, podPriority, ...(podSelector ? { podSelector } : {}) });
const WRITES = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);

describe('the Idle preview', () => {
  const f = new MaintenanceFixture('it-nm-preview');
  beforeAll(() => f.setup(2), 60_000);
  afterAll(() => f.teardown(), 60_000);

  test('NM-2.2 Idle previews each pod under its plan entry, the skipped one with its reason, the PDB-blocked one with its PDB, and writes nothing', async () => {
    const [node, other] = f.nodes as [string, string];
    await f.pod('web', node, 0);
    await f.pod('pg', node, 500, { db: 'postgres' });
    await f.pod('mid', node, 3000);
    await f.pod('big', node, 1000000000);
    await f.pod('pinned', node, 0, { [DRAIN_LABEL]: 'skip' });
    await f.pod('db', node, 0);
    await f.pod('bystander', other, 0);
    await f.waitRunning(7);
    await f.c.policy.createNamespacedPodDisruptionBudget({ namespace: f.ns, body: { metadata: { name: 'db' }, spec: { maxUnavailable: 0, selector: { matchLabels: { app: 'db' } } } } });
    await waitFor('PDB db computed', async () => (await f.c.policy.readNamespacedPodDisruptionBudget({ name: 'db', namespace: f.ns })).status?.observedGeneration === 1);
    const name = `${f.group}-m`;
    const h = await f.create(name, { nodeSelector: selectNodes(node), drainPlan: [D(1000, { matchLabels: { db: 'postgres' } }), D(1000), D(5000)] });

    const s = await f.statusWhen(h, 'the preview in status', (x) => x.nodeStatuses.length === 1 && x.nodeStatuses[0]!.drainMessage.includes('blocked now'));
    expect(s.stage).toBe('Idle');
    const ns = s.nodeStatuses[0]!;
    const dbPod = (await f.pods()).find((p) => appOf(p.metadata?.name) === 'db')!.metadata!.name!;
    expect(ns.drainMessage).toBe(`Planned: 5 pods in 4 entries, 1 skipped, 0 kept; blocked now: ${f.ns}/${dbPod} (PDB db)`);
    expect([ns.podsPendingEvictionRequest, ns.podsKept, ns.activeEvictionRequests]).toEqual([5, 0, 0]);

    const plan = await h.query(maintenancePlanQuery);
    const preview = plan.preview!.nodes;
    expect(preview.map((n) => n.node)).toEqual([node]);
    const at = (e: number) => (e < 0 ? 'none' : entryString(plan.plan[e] as PlanEntry));
    const rows = Object.fromEntries(preview[0]!.pods.map((p) => [appOf(p.pod.split('/')[1]), [at(p.entry), p.action, p.reason, p.blockedBy ?? []]]));
    expect(rows).toEqual({
      pg: ['Default ≤ 1000 db=postgres', 'Evict', 'default', []],
      web: ['Default ≤ 1000', 'Evict', 'default', []],
      db: ['Default ≤ 1000', 'Evict', 'default', ['db']],
      pinned: ['Default ≤ 1000', 'Skip', `label ${DRAIN_LABEL}=skip`, []],
      mid: ['Default ≤ 5000', 'Evict', 'default', []],
      big: ['Default ≤ 1000000000', 'Evict', 'default', []],
    });
    expect(preview[0]).toMatchObject({ exists: true, evict: 5, entries: 4, skipped: 1, kept: 0, blocked: 1, podsOmitted: 0, errors: [] });

    // The same cluster again: the activity answers the digest alone (nothing new for the history).
    const again = await createPreviewActivities(f.c).previewMaintenance({ nodes: [node], plan: plan.plan, previous: plan.preview!.digest });
    expect(again).toMatchObject({ digest: plan.preview!.digest, unchanged: true });
    expect('nodes' in again).toBe(false);

    // NM-2.2: no write to any Node, no eviction, no pod write in the namespace, no finalizer.
    const writes = (await f.audit()).filter(
      (e) =>
        !byControlPlane(e) &&
        WRITES.has(e.verb) &&
        ((e.objectRef?.resource === 'nodes' && f.nodes.includes(e.objectRef.name ?? '')) || (e.objectRef?.resource === 'pods' && e.objectRef.namespace === f.ns)),
    );
    expect(writes.map((e) => `${e.verb} ${e.objectRef?.resource}/${e.objectRef?.subresource ?? ''} ${e.objectRef?.name}`)).toEqual([]);
    expect(await f.evictions()).toEqual([]);
    expect(await f.hasFinalizer(name)).toBe(false);
    expect((await f.c.core.readNode({ name: node })).spec?.unschedulable).toBeFalsy();
  }, 180_000);
});

describe('#24.5 the Idle preview follows the cluster and says when it was computed', () => {
  const f = new MaintenanceFixture('it-nm-fresh');
  let ruleName = '';
  // The bridge feeds the Idle previews their changes: in this process, on the fixture's queue, only
  // for this test's maintenances (a label), its lease in the test's namespace.
  let bridge: RunningBridge | undefined;
  const logs: string[] = [];
  const label = { 'slipway.dev/it-preview-feed': 'yes' };
  beforeAll(async () => {
    await f.setup(1);
    bridge = await startBridge({
      kube: f.c,
      client: f.client,
      taskQueue: f.group,
      namespace: f.ns,
      leaseNamespace: f.ns,
      leaseName: uniqueName('it-preview-feed'),
      retryIntervalMs: 500,
      queryIntervalMs: 200,
      maintenances: true,
      maintenanceSelector: 'slipway.dev/it-preview-feed=yes',
      nodeGroups: false,
      budgets: false,
      log: (l) => logs.push(`${new Date().toISOString()} ${l}`),
    });
    await waitFor('the bridge leads', async () => bridge!.isLeader(), { timeoutMs: 40_000 });
  }, 90_000);
  afterAll(async () => {
    await bridge?.stop();
    if (ruleName) await f.objects.deleteClusterCustomObject({ group: DRAIN_RULE.group, version: DRAIN_RULE.version, plural: DRAIN_RULE.plural, name: ruleName }).catch(() => undefined);
    await f.teardown();
  }, 60_000);

  /** Within this, a change shows: well under the 60 s (and more) between the old refreshes. */
  const SOON_MS = 20_000;
  const line = (s: MaintenanceStatus) => s.nodeStatuses[0]?.drainMessage ?? '';

  test('#24.5 a PDB, a DrainRule and a new pod each show in the preview within seconds, its time in the status line, and `plan` computes a fresh one', async () => {
    const [node] = f.nodes as [string];
    await f.pod('shop', node, 0);
    await f.waitApps(['shop']);
    const name = `${f.group}-m`;
    const h = await f.create(name, { nodeSelector: selectNodes(node) }, label);
    // A second Idle maintenance of the same node: the bridge's watches serve both.
    const h2 = await f.create(`${f.group}-m2`, { nodeSelector: selectNodes(node) }, label);

    const first = await f.statusWhen(h, 'the first preview', (s) => line(s).startsWith('Planned: 1 pod'));
    // The bridge has what the preview read (mirrored from the status query) before the cluster changes.
    await waitFor('the bridge mirrors the preview', async () => logs.some((l) => l.includes(`/${name}: status Idle`)) && logs.some((l) => l.includes('preview feed: watching')));
    const computedAt = (await h.query(maintenancePlanQuery)).preview!.computedAt;
    expect(first.message).toBe(`Idle: 1 node selected; nothing touched; preview computed at ${computedAt}`);

    // A PDB that allows no disruption: the pod shows as blocked.
    await f.blockingPdb('shop');
    const shopPod = (await f.pods()).find((p) => appOf(p.metadata?.name) === 'shop')!.metadata!.name!;
    const pdbSeen = await f.statusWhen(h, 'the PDB in the preview', (s) => line(s).includes(`blocked now: ${f.ns}/${shopPod} (PDB shop)`), SOON_MS);
    expect(pdbSeen.message).not.toContain(computedAt); // recomputed, and it says so

    // A DrainRule that skips the pod.
    ruleName = `${f.group}-skip`;
    await f.objects.createClusterCustomObject({
      group: DRAIN_RULE.group, version: DRAIN_RULE.version, plural: DRAIN_RULE.plural,
      body: { apiVersion: `${DRAIN_RULE.group}/${DRAIN_RULE.version}`, kind: DRAIN_RULE.kind, metadata: { name: ruleName }, spec: { drain: { behavior: 'Skip' }, nodes: [{ selector: { matchLabels: { 'kubernetes.io/hostname': node } } }], pods: [{ selector: { matchLabels: { app: 'shop' } } }] } },
    });
    await f.statusWhen(h, 'the DrainRule in the preview', (s) => line(s).startsWith('Planned: no pod to evict, 1 skipped'), SOON_MS);

    // A new pod on the node.
    await f.pod('late', node, 0);
    await f.statusWhen(h, 'the new pod in the preview', (s) => line(s).startsWith('Planned: 1 pod in 1 entry, 1 skipped'), SOON_MS);

    // `plan`: a preview computed after the command asked, and how old it is.
    const asked = new Date().toISOString();
    const out: string[] = [];
    const err: string[] = [];
    expect(await run(['maintenance', name, 'plan'], { out: (l) => out.push(l), err: (l) => err.push(l) })).toBe(0);
    expect(err).toEqual([]);
    const shown = /nodes: 1 previewed; computed \d+ s ago at (\S+)/.exec(out.join('\n'));
    expect(shown).not.toBeNull();
    expect(shown![1]! >= asked).toBe(true);
    expect(out.join('\n')).toContain(`${f.ns}/${shopPod}: DrainRule ${ruleName}`);

    // Each change came as the bridge's signal: waiting ran no activity (only selections and previews),
    // and no safety-net timer fired.
    const events = (await h.fetchHistory()).events!;
    const signals = events.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'previewInputsChanged');
    expect(signals.length).toBeGreaterThanOrEqual(3);
    expect(bridge!.stats.previewSignals).toBeGreaterThanOrEqual(signals.length);
    // #27.4: each preview pass also asks whether the budgets let the maintenance finish.
    const idleActivities = ['maintenanceBudgetFit', 'previewMaintenance', 'selectMaintenanceNodes'];
    const activities = new Set(events.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean));
    expect([...activities].sort()).toEqual(idleActivities);
    expect(events.filter((e) => e.timerFiredEventAttributes)).toEqual([]);
    const events2 = (await h2.fetchHistory()).events!;
    expect(events2.filter((e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'previewInputsChanged').length).toBeGreaterThanOrEqual(3);
    expect([...new Set(events2.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name).filter(Boolean))].sort()).toEqual(idleActivities);

    // Two Idle maintenances, one watch of all pods and one of all PDBs: the apiserver's count of open
    // cluster-wide watches drops by exactly that when both are gone and the bridge stops its watches.
    const during = await clusterWatches();
    for (const n of [name, `${f.group}-m2`]) await f.objects.deleteClusterCustomObject({ group: GROUP, version: VERSION, plural: NODE_MAINTENANCE.plural, name: n });
    await waitFor('the feed stops watching', async () => logs.some((l) => l.includes('preview feed: no Idle maintenance; watches stopped')));
    const after = await clusterWatches();
    expect({ pods: during.pods - after.pods, pdbs: during.pdbs - after.pdbs }).toEqual({ pods: 1, pdbs: 1 });
  }, 180_000);
});
