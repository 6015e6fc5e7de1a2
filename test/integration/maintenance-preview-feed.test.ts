// #26.1 The Idle previews' feed covers its own gaps (starter/bridge/maintenance/preview-feed.ts), now
// that an Idle maintenance waits with no timer: against the real apiserver, the feed is told of
// maintenances as the reconciler tells it, and what it would signal is recorded instead of sent.
import { CustomObjectsApi, PolicyV1Api } from '@kubernetes/client-node';
import { DRAIN_RULE } from '../../api/drain-rule.js';
import type { PreviewReadFrom } from '../../shared/maintenance-preview.js';
import { PreviewFeed } from '../../starter/bridge/maintenance/preview-feed.js';
import { MaintenanceFixture } from '../support/maintenance.js';
import { waitFor } from '../support/wait.js';

const selectNodes = (...names: string[]) => ({ nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name' as const, operator: 'In' as const, values: names }] }] });

describe('#26.1 the preview feed covers its own gaps: an Idle maintenance waits with no timer', () => {
  const f = new MaintenanceFixture('it-nm-feedgap');
  beforeAll(() => f.setup(2, { worker: false }), 90_000);
  afterAll(() => f.teardown(), 60_000);

  /** Where each kind stands now, as a preview's reads would record it. */
  async function readNow(): Promise<PreviewReadFrom> {
    const rv = async (p: Promise<{ metadata?: { resourceVersion?: string } }>) => (await p).metadata!.resourceVersion!;
    return {
      pods: await rv(f.c.core.listPodForAllNamespaces({ limit: 1 })),
      pdbs: await rv(f.c.config.makeApiClient(PolicyV1Api).listPodDisruptionBudgetForAllNamespaces({ limit: 1 })),
      drainRules: await rv(f.c.config.makeApiClient(CustomObjectsApi).listClusterCustomObject({ group: DRAIN_RULE.group, version: DRAIN_RULE.version, plural: DRAIN_RULE.plural, limit: 1 })),
      nodes: await rv(f.c.core.listNode({ limit: 1 })),
    };
  }

  test('#26.1 a maintenance first seen with a preview read before where the watches began, or before a change they saw, is told once; one read after is not', async () => {
    const [n1, n2] = f.nodes as [string, string];
    const told: string[] = [];
    const logs: string[] = [];
    const feed = new PreviewFeed({ kube: f.c, tell: async (id) => (told.push(id), true), isLeader: () => true, stats: { previewSignals: 0 }, log: (l) => logs.push(l), settleMs: 100, settleMaxMs: 500 });
    const idle = (id: string, from: PreviewReadFrom, node: string) => ({ workflowId: id, inputs: { from, nodes: [node], namespaces: [f.ns], blockingPdbs: [] }, nodeSelector: selectNodes(node) });
    try {
      const old = await readNow(); // a preview read while no bridge watched (it was down, or not leading)
      const start = await readNow();
      // The first Idle maintenance starts the watches from its reads; a probe on n1 shows when they saw the pod.
      feed.observe('/a', idle('wf-a', start, n2));
      feed.observe('/probe', idle('wf-probe', start, n1));
      await waitFor('the feed watches', async () => logs.some((l) => l.includes('preview feed: watching')));
      const beforePod = await readNow();
      await f.c.core.createNamespacedPod({ namespace: f.ns, body: { metadata: { name: 'late' }, spec: { nodeName: n1, terminationGracePeriodSeconds: 1, containers: [{ name: 'c', image: 'registry.invalid/app:1' }] } } });
      await waitFor('the watches saw the pod', async () => told.includes('wf-probe'), { timeoutMs: 30_000, intervalMs: 50 });
      await waitFor('the pod runs', async () => (await f.c.core.readNamespacedPod({ namespace: f.ns, name: 'late' })).status?.phase === 'Running', { timeoutMs: 30_000 });
      const afterPod = await readNow();

      // Seen by the feed only now (its status query came after the pod): the pod is on its node.
      feed.observe('/b', idle('wf-b', beforePod, n1));
      // Its preview read before the watches began (a restarted bridge's older maintenance).
      feed.observe('/old', idle('wf-old', old, n2));
      // Its preview read after the pod: the watches tell it everything from there.
      feed.observe('/c', idle('wf-c', afterPod, n1));
      await waitFor('b and old told', async () => told.includes('wf-b') && told.includes('wf-old'), { timeoutMs: 10_000, intervalMs: 50 });
      await new Promise((r) => setTimeout(r, 1_500)); // past the settle window
      expect(told.filter((id) => id !== 'wf-probe').sort()).toEqual(['wf-b', 'wf-old']);
      // Seen again (its next status query), nothing more is told.
      feed.observe('/b', idle('wf-b', beforePod, n1));
      await new Promise((r) => setTimeout(r, 1_000));
      expect(told.filter((id) => id === 'wf-b')).toEqual(['wf-b']);
    } finally {
      await feed.close();
    }
  }, 120_000);
});
