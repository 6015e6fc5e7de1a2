// previewMaintenance: while a maintenance is Idle, what Drain would do on each selected node, read
// from the cluster and written nowhere (NM-2.2). The drain's own classification decides (DrainRules,
// the skip label, wait-completed, kept DaemonSet and static pods) with the whole effective plan as
// targets; PDBs come from policy/v1. Answers only a digest when nothing changed since `previous`,
// so a refresh every minute adds little to the workflow's history.
import { createHash } from 'node:crypto';
import { Context } from '@temporalio/activity';
import { PolicyV1Api } from '@kubernetes/client-node';
import type { DrainOptionsInput } from '../../api/drain-options.js';
import type { PlanEntry } from '../../api/drain-plan.js';
import type { LabelSelector } from '../../api/label-selector.js';
import type { MaintenancePreview, NodePreview } from '../../shared/maintenance-preview.js';
import type { Kube } from '../kube.js';
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

export type PreviewResult = MaintenancePreview | { digest: string; unchanged: true };

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
      const pdbs = await readPdbs();
      const nodes: NodePreview[] = [];
      const previewed = input.nodes.slice(0, PREVIEW_NODE_CAP);
      const podCap = podCapFor(previewed.length);
      for (const node of previewed) {
        const { snapshot, pods } = await classify({ nodeName: node, options: input.options, targets: input.plan });
        nodes.push(
          nodePreview({ node, exists: snapshot.node.exists, plan: input.plan, verdicts: snapshot.pods, pods, pdbs, errors: [...snapshot.errors, ...snapshot.heldBy], podCap }),
        );
        heartbeat(node);
      }
      const digest = previewDigest(nodes);
      return digest === input.previous ? { digest, unchanged: true } : { digest, nodes };
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
