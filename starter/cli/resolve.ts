// From what the user has in hand (a request, a node, a workflow ID) to the workflow to read or
// signal. A node's drain is the CLI's drain/<node>, a cycle's <request>/node/<node>/drain or a
// maintenance's nm-node/<node>/drain, found through the node's held-by annotation and the
// SlipwayNodes search attribute the cycle, maintenance and drain workflows set.
import { CustomObjectsApi } from '@kubernetes/client-node';
import { type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { GROUP, VERSION } from '../../api/crd.js';
import { CYCLE_NODE_REQUEST } from '../../api/cycle-node-request.js';
import { HELD_BY_ANNOTATION, NODE_MAINTENANCE } from '../../api/node-maintenance.js';
import { cycleStatusQuery, maintenanceStatusQuery } from '../../workflows/messages.js';
import {
  cycleObjectAttr,
  cycleWorkflowId,
  drainIdFor,
  drainWorkflowId,
  maintenanceDrainWorkflowId,
  maintenanceNodeWorkflowId,
  maintenanceObjectAttr,
  maintenanceWorkflowId,
  nodeCycleWorkflowId,
  nodeDrainWorkflowId,
  parseWorkflowId,
} from '../../workflows/ids.js';
import { CliError } from './errors.js';
import type { Ref } from './refs.js';
import type { Session } from './session.js';

export type Target =
  | { kind: 'request'; id: string }
  /** A NodeMaintenance's workflow nm/<name>/<uid>. */
  | { kind: 'maintenance'; id: string; name: string }
  /**
   * cycleId: the node's cycle, when the drain is a cycle's; coordinatorId: the node's maintenance
   * coordinator nm-node/<node>, when it is a maintenance's (either may not have started it yet).
   */
  | { kind: 'drain'; id: string; node: string; cycleId?: string; coordinatorId?: string };

/** The workflow's description, or undefined if Temporal has no such workflow. */
export async function describe(client: Client, id: string): Promise<WorkflowExecutionDescription | undefined> {
  try {
    return await client.workflow.getHandle(id).describe();
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return undefined;
    throw err;
  }
}

async function listIds(client: Client, query: string, max = 20): Promise<string[]> {
  const ids: string[] = [];
  for await (const w of client.workflow.list({ query, pageSize: max })) {
    ids.push(w.workflowId);
    if (ids.length >= max) break;
  }
  return ids;
}

/** The request's workflow: the ID the bridge recorded in status (or the one it would use). */
async function requestWorkflowId(session: Session, namespace: string, name: string): Promise<string> {
  const what = `CycleNodeRequest ${namespace}/${name}`;
  const obj = await session.read(what, (k) =>
    k.config.makeApiClient(CustomObjectsApi).getNamespacedCustomObject({
      group: CYCLE_NODE_REQUEST.group,
      version: CYCLE_NODE_REQUEST.version,
      plural: CYCLE_NODE_REQUEST.plural,
      namespace,
      name,
    }) as Promise<{ metadata: { uid: string }; status?: { workflowId?: string } }>,
  );
  if (obj) return obj.status?.workflowId ?? cycleWorkflowId({ namespace, name, uid: obj.metadata.uid });
  // Deleted, but its workflow may still be in Temporal.
  const [id] = await listIds(await session.client(), `SlipwayObject = '${cycleObjectAttr({ namespace, name })}'`, 1);
  if (id) return id;
  throw new CliError(`${what} not found (and no cycle of it in Temporal namespace ${session.settings.namespace})`);
}

/** The maintenance's workflow: the ID the bridge recorded in status (or the one it would use), else the newest in Temporal. */
export async function maintenanceWorkflowIdOf(session: Session, name: string): Promise<string> {
  const what = `NodeMaintenance ${name}`;
  const obj = await session.read(what, (k) =>
    k.config.makeApiClient(CustomObjectsApi).getClusterCustomObject({ group: GROUP, version: VERSION, plural: NODE_MAINTENANCE.plural, name }) as Promise<{
      metadata: { uid: string };
      status?: { workflowId?: string };
    }>,
  );
  if (obj) return obj.status?.workflowId ?? maintenanceWorkflowId({ name, uid: obj.metadata.uid });
  // Deleted, but its workflow may still be in Temporal (the list is newest first).
  const [id] = await listIds(await session.client(), `SlipwayObject = '${maintenanceObjectAttr(name)}'`, 1);
  if (id) return id;
  throw new CliError(`${what} not found (and no maintenance of it in Temporal namespace ${session.settings.namespace})`);
}

/** No drain of the node, by anyone (`drain` starts one then). */
export class NoDrainError extends CliError {}

/** A drain of the node, with what its ID alone does not say: whether it runs, and whether its owner does. */
interface Found {
  t: Target & { kind: 'drain' };
  desc?: WorkflowExecutionDescription;
  /** The cycle or node coordinator that runs (or will run) this drain is running. */
  ownerRunning: boolean;
}

/** The owner of a drain that may not have started yet: the node's cycle, or the node's maintenance coordinator. */
export const drainOwner = (t: Target & { kind: 'drain' }): string | undefined => t.cycleId ?? t.coordinatorId;

/** The drain a workflow involving `node` leads to, as a target (undefined: none, or not a drain of this node). */
function drainTargetVia(workflowId: string, node: string): (Target & { kind: 'drain' }) | undefined {
  const id = drainIdFor(workflowId, node);
  const p = id ? parseWorkflowId(id) : undefined;
  if (!id || !p) return undefined;
  if (p.kind === 'nodeDrain') return { kind: 'drain', id, node, cycleId: nodeCycleWorkflowId(p.requestId, node) };
  if (p.kind === 'maintenanceDrain') return { kind: 'drain', id, node, coordinatorId: maintenanceNodeWorkflowId(node) };
  if (p.kind === 'drain') return { kind: 'drain', id, node };
  return undefined;
}

/**
 * The drain of a node, whoever started it: the CLI's drain/<node>, a cycle's
 * <request>/node/<node>/drain, a maintenance's nm-node/<node>/drain (found through the node's held-by
 * annotation and the SlipwayNodes search attribute). A running drain first; two running ones are
 * ambiguous (the error names both); then a drain whose cycle or coordinator runs (not started yet);
 * then the one that finished last.
 */
export async function drainOfNode(session: Session, node: string): Promise<Target & { kind: 'drain' }> {
  const client = await session.client();
  const targets = new Map<string, Target & { kind: 'drain' }>();
  const add = (t: (Target & { kind: 'drain' }) | undefined) => t && !targets.has(t.id) && targets.set(t.id, t);
  add({ kind: 'drain', id: drainWorkflowId(node), node });
  const held = (await session.read(`node ${node}`, (k) => k.core.readNode({ name: node })))?.metadata?.annotations?.[HELD_BY_ANNOTATION];
  if (held) add(drainTargetVia(maintenanceNodeWorkflowId(node), node));
  for (const wf of await listIds(client, `SlipwayNodes = '${node}' AND ExecutionStatus = 'Running'`)) add(drainTargetVia(wf, node));
  const found: Found[] = [];
  for (const t of targets.values()) {
    const desc = await describe(client, t.id);
    const owner = drainOwner(t);
    const ownerRunning = owner ? (await describe(client, owner))?.status.name === 'RUNNING' : false;
    found.push({ t, desc, ownerRunning });
  }
  const running = found.filter((f) => f.desc?.status.name === 'RUNNING');
  if (running.length > 1) {
    throw new CliError(`node ${node} has ${running.length} running drains: ${running.map((f) => f.t.id).join(', ')}; name the one you mean by its ID`);
  }
  if (running[0]) return running[0].t;
  const waiting = found.filter((f) => !f.desc && f.ownerRunning);
  // A held node is the maintenance's: its drain first, even before the coordinator starts it.
  const pick = waiting.find((f) => f.t.coordinatorId) ?? waiting[0];
  if (pick) return pick.t;
  if (held) return drainTargetVia(maintenanceNodeWorkflowId(node), node)!;
  for (const wf of await listIds(client, `SlipwayNodes = '${node}'`)) {
    const t = drainTargetVia(wf, node);
    if (t && !targets.has(t.id)) found.push({ t, desc: await describe(client, t.id), ownerRunning: false });
    add(t);
  }
  const closed = found.filter((f) => f.desc).sort((a, b) => (b.desc!.closeTime?.getTime() ?? 0) - (a.desc!.closeTime?.getTime() ?? 0));
  if (closed[0]) return closed[0].t;
  throw new NoDrainError(
    `no drain of node ${node} found: no workflow ${drainWorkflowId(node)}, no maintenance holding it and no cycle of ${node} in Temporal namespace ${session.settings.namespace}`,
  );
}

/** What status and follow read. */
export async function resolveTarget(session: Session, ref: Ref): Promise<Target> {
  if (ref.kind === 'node') return drainOfNode(session, ref.node);
  if (ref.kind === 'request') return { kind: 'request', id: await requestWorkflowId(session, ref.namespace, ref.name) };
  if (ref.kind === 'maintenance') return { kind: 'maintenance', id: await maintenanceWorkflowIdOf(session, ref.name), name: ref.name };
  const p = ref.parsed;
  switch (p.kind) {
    case 'request':
      return { kind: 'request', id: ref.id };
    case 'drain':
      return { kind: 'drain', id: ref.id, node: p.node };
    case 'nodeCycle':
      return { kind: 'drain', id: nodeDrainWorkflowId(ref.id), node: p.node, cycleId: ref.id };
    case 'nodeDrain':
      return { kind: 'drain', id: ref.id, node: p.node, cycleId: nodeCycleWorkflowId(p.requestId, p.node) };
    case 'maintenanceDrain':
      return { kind: 'drain', id: ref.id, node: p.node, coordinatorId: maintenanceNodeWorkflowId(p.node) };
    case 'maintenanceNode':
      return { kind: 'drain', id: maintenanceDrainWorkflowId(p.node), node: p.node, coordinatorId: ref.id };
    case 'maintenance':
      return { kind: 'maintenance', id: ref.id, name: p.name };
    case 'nodeGroupObserver':
      throw new CliError(`${ref.id} is the drift observer of NodeGroup ${p.name}: its findings are in \`kubectl describe nodegroup ${p.name}\` and in the Web UI`);
  }
}

/**
 * The drain a signal goes to. A request needs a node: --node, or the node of the pod the signal
 * names; without either, the error lists the nodes it is draining.
 */
export async function resolveDrain(session: Session, ref: Ref, node: string | undefined, podNode?: () => Promise<string>): Promise<Target & { kind: 'drain' }> {
  const t = await resolveTarget(session, ref);
  if (t.kind === 'drain') {
    if (node && node !== t.node) throw new CliError(`--node ${node} does not match ${t.id}, which drains ${t.node}`);
    return t;
  }
  const which = node ?? (podNode ? await podNode() : undefined);
  if (t.kind === 'maintenance') return maintenanceDrain(session, t, which);
  if (which) {
    const cycleId = nodeCycleWorkflowId(t.id, which);
    return { kind: 'drain', id: nodeDrainWorkflowId(cycleId), node: which, cycleId };
  }
  const client = await session.client();
  const s = await client.withDeadline(Date.now() + 10_000, () => client.workflow.getHandle(t.id).query(cycleStatusQuery)).catch(() => undefined);
  const draining = s?.nodes.filter((n) => n.phase === 'DrainingPods').map((n) => n.nodeName) ?? [];
  throw new CliError(`${t.id} is a request: say which node with --node${draining.length ? ` (draining now: ${draining.join(', ')})` : ''}`);
}

/**
 * The drain a maintenance's signal goes to: the node's coordinator's drain nm-node/<node>/drain.
 * Without a node (no --node, no pod), the error lists the nodes the maintenance covers.
 */
async function maintenanceDrain(session: Session, t: Target & { kind: 'maintenance' }, node: string | undefined): Promise<Target & { kind: 'drain' }> {
  const client = await session.client();
  const s = await client.withDeadline(Date.now() + 10_000, () => client.workflow.getHandle(t.id).query(maintenanceStatusQuery)).catch(() => undefined);
  const nodes = s?.nodeStatuses.map((n) => n.nodeRef.name) ?? [];
  if (!node) throw new CliError(`${t.id} is a maintenance: say which node with --node${nodes.length ? ` (its nodes: ${nodes.join(', ')}${s!.nodeStatusesOmitted ? ` and ${s!.nodeStatusesOmitted} more` : ''})` : ''}`);
  if (s && !s.nodeStatusesOmitted && !nodes.includes(node)) throw new CliError(`node ${node} is not selected by maintenance ${t.name}${nodes.length ? ` (its nodes: ${nodes.join(', ')})` : ''}`);
  return { kind: 'drain', id: maintenanceDrainWorkflowId(node), node, coordinatorId: maintenanceNodeWorkflowId(node) };
}
