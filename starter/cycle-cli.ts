// `slipway cycle`: create a CycleNodeRequest (like kubectl-cycle), show what a dry run would do,
// and follow a cycle live: nodes done out of total, each node's phase, and what blocks its drain.
import { CustomObjectsApi } from '@kubernetes/client-node';
import { WorkflowFailedError, type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { CYCLE_NODE_REQUEST, CycleNodeRequestSpec, allAtOnce, nodeGroupsOf, type CycleNodeRequestSpecInput } from '../api/cycle-node-request.js';
import { selectorToString } from '../api/label-selector.js';
import { FROM_NODE_GROUP_LABEL } from '../api/node-group-kind.js';
import type { Kube } from '../kube/client.js';
import { webUiLink } from '../shared/temporal.js';
import type { CycleStatus } from '../workflows/cycle/types.js';
import { cycleWorkflowId, nodeCycleWorkflowId, nodeDrainWorkflowId } from '../workflows/ids.js';
import { cycleStatusQuery } from '../workflows/messages.js';
import { NODE_GROUP_LABEL } from '../api/node-groups.js';
import { API_VERSION } from '../api/names.js';
import { everyNode } from './cycle-nodes.js';

export interface CycleArgs {
  namespace: string;
  name: string;
  nodeGroup: string;
  nodes?: string[];
  concurrency?: number;
  method?: 'Drain' | 'Wait';
  provider?: 'kwok' | 'aws';
  selector?: Record<string, string>;
  /** Made from this NodeGroup's template (`slipway cycle <NodeGroup>`, as kubectl-cycle): flags given override it. */
  fromNodeGroup?: { name: string; template: CycleNodeRequestSpecInput };
}

export function cycleSpec(a: CycleArgs): CycleNodeRequestSpecInput {
  if (a.fromNodeGroup) {
    const t = a.fromNodeGroup.template;
    return {
      ...t,
      ...(a.provider ? { provider: a.provider } : {}),
      ...(a.nodes ? { nodeNames: a.nodes } : {}),
      cycleSettings: { ...t.cycleSettings, ...(a.method ? { method: a.method } : {}), ...(a.concurrency ? { concurrency: a.concurrency } : {}) },
    };
  }
  return {
    nodeGroupName: a.nodeGroup,
    provider: a.provider,
    selector: { matchLabels: a.selector ?? { [NODE_GROUP_LABEL]: a.nodeGroup } },
    nodeNames: a.nodes,
    cycleSettings: { method: a.method ?? 'Drain', concurrency: a.concurrency },
  };
}

/** What a dry run found: the cycle's nodes in the batches the concurrency gives. */
export interface DryRunPlan {
  nodeGroups: string[];
  method: string;
  concurrency: number;
  nodes: string[];
  batches: string[][];
  /** Named (--nodes) but not in the group. */
  missingNodes: string[];
  /** The request skips missing named nodes (validationOptions.skipMissingNamedNodes). */
  skipMissing: boolean;
}

/** What the cycle would do: the nodes, in the batches the concurrency gives. Reads only. */
export async function dryRun(kube: Kube, a: CycleArgs): Promise<DryRunPlan> {
  const parsed = CycleNodeRequestSpec.safeParse(cycleSpec(a));
  if (!parsed.success) throw new Error(`invalid: ${parsed.error.issues.map((i) => `spec.${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const spec = parsed.data;
  const nodes = (await kube.core.listNode({ labelSelector: selectorToString(spec.selector) })).items.map((n) => n.metadata!.name!).sort();
  const chosen = spec.nodeNames?.length ? nodes.filter((n) => spec.nodeNames!.includes(n)) : nodes;
  const missing = (spec.nodeNames ?? []).filter((n) => !nodes.includes(n));
  const c = spec.cycleSettings.concurrency ?? allAtOnce(chosen.length);
  const batches: string[][] = [];
  for (let i = 0; i < chosen.length; i += c) batches.push(chosen.slice(i, i + c));
  // The apiserver's own validation (CEL), without creating anything.
  const api = kube.config.makeApiClient(CustomObjectsApi);
  await api.createNamespacedCustomObject({ ...crd(), namespace: a.namespace, body: body(a), dryRun: 'All' });
  return { nodeGroups: nodeGroupsOf(spec), method: spec.cycleSettings.method, concurrency: c, nodes: chosen, batches, missingNodes: missing, skipMissing: Boolean(spec.validationOptions?.skipMissingNamedNodes) };
}

export function renderDryRun(a: CycleArgs, p: DryRunPlan): string {
  return [
    `CycleNodeRequest ${a.namespace}/${a.name} (dry run, nothing created): node groups ${p.nodeGroups.join(', ')}, method ${p.method}, concurrency ${p.concurrency}`,
    ...(p.missingNodes.length ? [`  missing named nodes: ${p.missingNodes.join(', ')}${p.skipMissing ? ' (skipped)' : ' (the request would fail)'}`] : []),
    ...p.batches.map((b, i) => `  batch ${i + 1}: detach ${b.join(', ')} → wait for ${b.length} Ready replacement(s) → cordon, drain, delete, terminate`),
    p.nodes.length ? '' : '  no node matches: the request would fail',
  ].filter(Boolean).join('\n');
}

const crd = () => ({ group: CYCLE_NODE_REQUEST.group, version: CYCLE_NODE_REQUEST.version, plural: CYCLE_NODE_REQUEST.plural });
const body = (a: CycleArgs) => ({
  apiVersion: API_VERSION,
  kind: CYCLE_NODE_REQUEST.kind,
  metadata: { name: a.name, namespace: a.namespace, ...(a.fromNodeGroup ? { labels: { [FROM_NODE_GROUP_LABEL]: a.fromNodeGroup.name } } : {}) },
  spec: cycleSpec(a),
});

export async function createCycle(kube: Kube, a: CycleArgs): Promise<{ uid: string }> {
  const api = kube.config.makeApiClient(CustomObjectsApi);
  const obj = (await api.createNamespacedCustomObject({ ...crd(), namespace: a.namespace, body: body(a) })) as { metadata: { uid: string } };
  return { uid: obj.metadata.uid };
}

/** The cycle for a terminal: each node's phase, and for a draining node its drain's ID and blocker. */
export function renderCycle(s: CycleStatus, requestId?: string): string {
  const lines = [`${s.phase}: ${s.nodesCycled}/${s.nodesTotal} nodes cycled${s.message ? ` — ${s.message}` : ''}`];
  // #28: a big request answers with a bounded list; the counts cover every node.
  const counted = Object.entries(s.nodesByPhase ?? {}).filter(([, n]) => n > 0);
  if (s.nodes.length < s.nodesTotal && counted.length) lines.push(`  by phase: ${counted.map(([p, n]) => `${p} ${n}`).join(', ')}; ${s.nodesTotal - s.nodes.length} nodes not listed (each has its CycleNodeStatus)`);
  for (const n of s.nodes) {
    lines.push(`  ${n.nodeName.padEnd(32)} ${n.phase}${n.message && n.phase !== 'DrainingPods' ? ` (${n.message})` : ''}`);
    if (n.phase !== 'DrainingPods') continue;
    if (requestId) lines.push(`      drain ${nodeDrainWorkflowId(nodeCycleWorkflowId(requestId, n.nodeName))}`);
    // Cluster API's shape: a header line, then the blockers; a one-line message (held by hooks) is shown whole.
    const drain = n.drainMessage?.split('\n') ?? [];
    lines.push(...(drain.length === 1 ? drain : drain.slice(1, 4)).map((l) => `      ${l}`));
  }
  return lines.join('\n');
}

const QUERY_TIMEOUT_MS = 10_000;

/**
 * The request's status, answered by a worker; undefined when no worker answers in time. With
 * `everyNode` its nodes are all of them, paged (#28: the answer alone lists a bounded set), for
 * `-o json`/`-o yaml`; the text view keeps the bounded list and the counts.
 */
export async function queryCycle(client: Client, id: string, opts: { everyNode?: boolean } = {}): Promise<CycleStatus | undefined> {
  const h = client.workflow.getHandle(id);
  const ask = <T>(query: () => Promise<T>) => client.withDeadline(Date.now() + QUERY_TIMEOUT_MS, query);
  return (opts.everyNode ? everyNode(h, undefined, ask).then((r) => r.status) : ask(() => h.query(cycleStatusQuery))).catch((err: unknown) => {
    if (err instanceof WorkflowNotFoundError) throw err;
    return undefined;
  });
}

/** A followed cycle ended other than Successful (one line: the ID, how and when it ended, why). */
export class CycleFailed extends Error {}

/** Follows a request's workflow until it closes; returns 0 when Successful, else 1. */
export async function followCycle(client: Client, ref: { namespace: string; name: string; uid: string }, out = console.log, err = console.error): Promise<number> {
  try {
    return await followCycleId(client, cycleWorkflowId(ref), { out, err });
  } catch (e) {
    if (!(e instanceof CycleFailed)) throw e;
    err(e.message);
    return 1;
  }
}

/** Follows a request's workflow until it closes: 0 when Successful; CycleFailed otherwise. */
export async function followCycleId(client: Client, id: string, io: { out: (l: string) => void; err: (l: string) => void }): Promise<number> {
  io.out(`workflow ${id}: ${webUiLink(id)}`);
  let last = '';
  let note = '';
  const once = (line: string) => {
    if (line !== note) io.out(line);
    note = line;
  };
  for (;;) {
    let desc: WorkflowExecutionDescription | undefined;
    try {
      desc = await client.workflow.getHandle(id).describe();
    } catch (e) {
      if (!(e instanceof WorkflowNotFoundError)) throw e;
      once(`waiting for the bridge to start ${id}`);
    }
    if (desc) {
      const running = desc.status.name === 'RUNNING';
      const status = await queryCycle(client, id);
      if (status) {
        const text = renderCycle(status, id);
        if (text !== last) io.out(`[${new Date().toISOString()}] ${text}`);
        last = text;
      } else if (running) once(`waiting: no worker answered within ${QUERY_TIMEOUT_MS / 1000} s: is a worker polling task queue ${desc.taskQueue}?`);
      if (!running) {
        if (status?.phase === 'Successful') return 0;
        const why = status?.message ?? (await closedCycleMessage(client, id));
        throw new CycleFailed(`${id} ${status?.phase ?? desc.status.name.toLowerCase()} at ${desc.closeTime?.toISOString() ?? '?'}${why ? `: ${why}` : ''}`);
      }
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** Why a closed request ended, from its result (no worker needed). */
export async function closedCycleMessage(client: Client, id: string): Promise<string | undefined> {
  try {
    const r = (await client.workflow.getHandle(id).result()) as CycleStatus;
    return `${r.phase}: ${r.message}`;
  } catch (e) {
    if (e instanceof WorkflowFailedError) return (e.cause as Error | undefined)?.message ?? e.message;
    throw e;
  }
}
