// `slipway cycle`: create a CycleNodeRequest (like kubectl-cycle), show what a dry run would do,
// and follow a cycle live: nodes done out of total, each node's phase, and what blocks its drain.
import { CustomObjectsApi } from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import { CYCLE_NODE_REQUEST, CycleNodeRequestSpec, nodeGroupsOf, type CycleNodeRequestSpecInput } from '../api/cycle-node-request.js';
import { selectorToString } from '../api/label-selector.js';
import { NODE_GROUP_LABEL } from '../activities/inventory.js';
import type { Kube } from '../activities/kube.js';
import { webUiLink } from '../worker/config.js';
import { cycleWorkflowId, type CycleStatus } from '../workflows/cycle/types.js';
import { cycleStatusQuery } from '../workflows/messages.js';

export interface CycleArgs {
  namespace: string;
  name: string;
  nodeGroup: string;
  nodes?: string[];
  concurrency?: number;
  method?: 'Drain' | 'Wait';
  provider?: 'kwok' | 'aws';
  selector?: Record<string, string>;
}

export function cycleSpec(a: CycleArgs): CycleNodeRequestSpecInput {
  return {
    nodeGroupName: a.nodeGroup,
    provider: a.provider,
    selector: { matchLabels: a.selector ?? { [NODE_GROUP_LABEL]: a.nodeGroup } },
    nodeNames: a.nodes,
    cycleSettings: { method: a.method ?? 'Drain', concurrency: a.concurrency },
  };
}

/** What the cycle would do: the nodes, in the batches the concurrency gives. Reads only. */
export async function dryRun(kube: Kube, a: CycleArgs): Promise<string> {
  const parsed = CycleNodeRequestSpec.safeParse(cycleSpec(a));
  if (!parsed.success) return `invalid: ${parsed.error.issues.map((i) => `spec.${i.path.join('.')}: ${i.message}`).join('; ')}`;
  const spec = parsed.data;
  const nodes = (await kube.core.listNode({ labelSelector: selectorToString(spec.selector) })).items.map((n) => n.metadata!.name!).sort();
  const chosen = spec.nodeNames?.length ? nodes.filter((n) => spec.nodeNames!.includes(n)) : nodes;
  const missing = (spec.nodeNames ?? []).filter((n) => !nodes.includes(n));
  const c = spec.cycleSettings.concurrency ?? Math.max(1, chosen.length);
  const batches: string[][] = [];
  for (let i = 0; i < chosen.length; i += c) batches.push(chosen.slice(i, i + c));
  // The apiserver's own validation (CEL), without creating anything.
  const api = kube.config.makeApiClient(CustomObjectsApi);
  await api.createNamespacedCustomObject({ ...crd(), namespace: a.namespace, body: body(a), dryRun: 'All' });
  return [
    `CycleNodeRequest ${a.namespace}/${a.name} (dry run, nothing created): node groups ${nodeGroupsOf(spec).join(', ')}, method ${spec.cycleSettings.method}, concurrency ${c}`,
    ...(missing.length ? [`  missing named nodes: ${missing.join(', ')}${spec.validationOptions?.skipMissingNamedNodes ? ' (skipped)' : ' (the request would fail)'}`] : []),
    ...batches.map((b, i) => `  batch ${i + 1}: detach ${b.join(', ')} → wait for ${b.length} Ready replacement(s) → cordon, drain, delete, terminate`),
    chosen.length ? '' : '  no node matches: the request would fail',
  ].filter(Boolean).join('\n');
}

const crd = () => ({ group: CYCLE_NODE_REQUEST.group, version: CYCLE_NODE_REQUEST.version, plural: CYCLE_NODE_REQUEST.plural });
const body = (a: CycleArgs) => ({
  apiVersion: `${CYCLE_NODE_REQUEST.group}/${CYCLE_NODE_REQUEST.version}`,
  kind: CYCLE_NODE_REQUEST.kind,
  metadata: { name: a.name, namespace: a.namespace },
  spec: cycleSpec(a),
});

export async function createCycle(kube: Kube, a: CycleArgs): Promise<{ uid: string }> {
  const api = kube.config.makeApiClient(CustomObjectsApi);
  const obj = (await api.createNamespacedCustomObject({ ...crd(), namespace: a.namespace, body: body(a) })) as { metadata: { uid: string } };
  return { uid: obj.metadata.uid };
}

export function renderCycle(s: CycleStatus): string {
  const lines = [`${s.phase}: ${s.nodesCycled}/${s.nodesTotal} nodes cycled${s.message ? ` — ${s.message}` : ''}`];
  for (const n of s.nodes) {
    lines.push(`  ${n.nodeName.padEnd(32)} ${n.phase}${n.message && n.phase !== 'DrainingPods' ? ` (${n.message})` : ''}`);
    if (n.phase === 'DrainingPods' && n.drainMessage) lines.push(...n.drainMessage.split('\n').slice(1, 4).map((l) => `      ${l}`));
  }
  return lines.join('\n');
}

/** Follows the request's workflow until it closes; returns 0 when Successful. */
export async function followCycle(client: Client, ref: { namespace: string; name: string; uid: string }, out = console.log): Promise<number> {
  const id = cycleWorkflowId(ref);
  out(`workflow ${id}: ${webUiLink(id)}`);
  let last = '';
  for (;;) {
    const handle = client.workflow.getHandle(id);
    let status: CycleStatus | undefined;
    let running = true;
    try {
      running = (await handle.describe()).status.name === 'RUNNING';
      status = await handle.query(cycleStatusQuery);
    } catch {
      // not started yet (the bridge starts it): look again
    }
    if (status) {
      const text = renderCycle(status);
      if (text !== last) out(`[${new Date().toISOString()}] ${text}`);
      last = text;
      if (!running) return status.phase === 'Successful' ? 0 : 1;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}
