// previewMaintenance: while a maintenance is Idle, what Drain would do on each selected node, read
// from the cluster and written nowhere (NM-2.2). The drain's own classification decides (DrainRules,
// the skip label, wait-completed, kept DaemonSet and static pods) with the whole effective plan as
// targets; PDBs come from policy/v1. Answers only a digest (and when it was computed) when nothing
// changed since `previous`, so a refresh adds little to the workflow's history. With it, what it
// read (PreviewInputs): the bridge's feed (starter/bridge/preview-feed.ts) signals the workflow when
// one of those changes.
import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { CustomObjectsApi, PolicyV1Api } from '@kubernetes/client-node';
import { DRAIN_RULE } from '../../api/drain-rule.js';
import type { DrainOptionsInput } from '../../api/drain-options.js';
import type { PlanEntry } from '../../api/drain-plan.js';
import type { LabelSelector } from '../../api/label-selector.js';
import type { MaintenancePreview, NodePreview, PreviewInputs, PreviewReadFrom } from '../../shared/maintenance-preview.js';
import type { Kube } from '../../kube/client.js';
import { nodeClassifier } from '../drain/snapshot.js';
import { nodePreview, podCapFor, type PdbFacts } from './preview-plan.js';

/** Nodes previewed; further selected nodes show as "Planned" without a preview. */
export const PREVIEW_NODE_CAP = 100;

export interface PreviewInput {
  nodes: string[];
  /** The effective plan P(M). */
  plan: PlanEntry[];
  /** spec.drain. */
  options?: DrainOptionsInput;
  /** The digest of the preview the workflow holds: an unchanged preview is answered by its digest alone. */
  previous?: string;
}

/** `inputs` without `nodes` (the workflow has them: it selected them). */
export type PreviewResult = (MaintenancePreview | { digest: string; unchanged: true; computedAt: string }) & { inputs?: Omit<PreviewInputs, 'nodes'> };

/** The resourceVersion of each collection the preview reads, now (one-item lists): a watch from these misses nothing after. */
export async function previewReadFrom(kube: Kube): Promise<PreviewReadFrom> {
  const policy = kube.config.makeApiClient(PolicyV1Api);
  const custom = kube.config.makeApiClient(CustomObjectsApi);
  const [pods, pdbs, rules, nodes] = await Promise.all([
    kube.core.listPodForAllNamespaces({ limit: 1 }),
    policy.listPodDisruptionBudgetForAllNamespaces({ limit: 1 }),
    custom.listClusterCustomObject({ group: DRAIN_RULE.group, version: DRAIN_RULE.version, plural: DRAIN_RULE.plural, limit: 1 }) as Promise<{ metadata?: { resourceVersion?: string } }>,
    kube.core.listNode({ limit: 1 }),
  ]);
  const rv = (l: { metadata?: { resourceVersion?: string } }) => l.metadata?.resourceVersion ?? '';
  return { pods: rv(pods), pdbs: rv(pdbs), drainRules: rv(rules), nodes: rv(nodes) };
}

export const previewDigest = (nodes: NodePreview[]) => createHash('sha256').update(JSON.stringify(nodes)).digest('hex').slice(0, 16);

export function createPreviewActivities(kube: Kube) {
  const classify = nodeClassifier(kube);
  const policy = kube.config.makeApiClient(PolicyV1Api);
  const readPdbs = async (): Promise<PdbFacts[]> => {
    const out: PdbFacts[] = [];
    let _continue: string | undefined;
    do {
      const page = await policy.listPodDisruptionBudgetForAllNamespaces({ limit: 500, _continue });
      for (const b of page.items) {
        out.push({
          namespace: b.metadata!.namespace!,
          name: b.metadata!.name!,
          selector: (b.spec?.selector as LabelSelector | undefined) ?? null,
          disruptionsAllowed: b.status?.disruptionsAllowed ?? 0,
        });
      }
      _continue = page.metadata?._continue || undefined;
    } while (_continue);
    return out;
  };
  return {
    /** Read-only: classifies each node's pods as Drain would, today. */
    async previewMaintenance(input: PreviewInput): Promise<PreviewResult> {
      // Before any read: the bridge's feed may watch from here, so a change after it is not missed.
      const from = await previewReadFrom(kube);
      const pdbs = await readPdbs();
      const namespaces = new Set<string>();
      const nodes: NodePreview[] = [];
      const previewed = input.nodes.slice(0, PREVIEW_NODE_CAP);
      const podCap = podCapFor(previewed.length);
      for (const node of previewed) {
        const { snapshot, pods } = await classify({ nodeName: node, options: input.options, targets: input.plan });
        for (const p of pods) namespaces.add(p.namespace);
        nodes.push(
          nodePreview({ node, exists: snapshot.node.exists, plan: input.plan, verdicts: snapshot.pods, pods, pdbs, errors: [...snapshot.errors, ...snapshot.heldBy], podCap }),
        );
        heartbeat(node);
      }
      const digest = previewDigest(nodes);
      const computedAt = new Date().toISOString();
      const blockingPdbs = pdbs.filter((b) => namespaces.has(b.namespace) && b.disruptionsAllowed <= 0).map((b) => `${b.namespace}/${b.name}`);
      const inputs = { from, namespaces: [...namespaces].sort(), blockingPdbs: blockingPdbs.sort() };
      return digest === input.previous ? { digest, unchanged: true, computedAt, inputs } : { digest, computedAt, nodes, inputs };
    },
  };
}

function heartbeat(details: string): void {
  try {
    Context.current().heartbeat(details);
  } catch {
    // called outside an activity (a direct call in a test): nothing to heartbeat
  }
}
