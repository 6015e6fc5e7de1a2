// From what the user has in hand (a request, a node, a workflow ID) to the workflow to read or
// signal. A node's drain is the CLI's drain/<node> or a cycle's <request>/node/<node>/drain, found
// through the SlipwayNodes search attribute the cycle workflows set.
import { CustomObjectsApi } from '@kubernetes/client-node';
import { type Client, type WorkflowExecutionDescription } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/common';
import { GROUP, VERSION } from '../../api/crd.js';
import { CYCLE_NODE_REQUEST } from '../../api/cycle-node-request.js';
import { NODE_MAINTENANCE } from '../../api/node-maintenance.js';
import { cycleStatusQuery, maintenanceStatusQuery } from '../../workflows/messages.js';
import {
  cycleWorkflowId,
  drainIdFor,
  drainWorkflowId,
  maintenanceDrainWorkflowId,
  maintenanceWorkflowId,
  nodeCycleWorkflowId,
  nodeDrainWorkflowId,
  parseWorkflowId,
} from '../../workflows/ids.js';
import { maintenanceObjectAttr } from '../bridge/maintenance-temporal.js';
import { CliError } from './errors.js';
import type { Ref } from './refs.js';
import type { Session } from './session.js';

export type Target =
  | { kind: 'request'; id: string }
  /** A NodeMaintenance's workflow nm/<name>/<uid>. */
  | { kind: 'maintenance'; id: string; name: string }
  /** cycleId: the node's cycle, when the drain is a cycle's (it may not have started yet). */
  | { kind: 'drain'; id: string; node: string; cycleId?: string };

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
  const [id] = await listIds(await session.client(), `SlipwayObject = '${CYCLE_NODE_REQUEST.kind}/${namespace}/${name}'`, 1);
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

/** The drain of a node: a running one first (the CLI's, then a cycle's), else the latest finished one. */
export async function drainOfNode(session: Session, node: string): Promise<Target> {
  const client = await session.client();
  const own = drainWorkflowId(node);
  const ownDesc = await describe(client, own);
  if (ownDesc?.status.name === 'RUNNING') return { kind: 'drain', id: own, node };
  const viaCycles = async (query: string): Promise<Target | undefined> => {
    for (const wf of await listIds(client, query)) {
      const id = drainIdFor(wf, node);
      const p = id ? parseWorkflowId(id) : undefined;
      if (!id || !p || p.kind !== 'nodeDrain') continue;
      return { kind: 'drain', id, node, cycleId: nodeCycleWorkflowId(p.requestId, node) };
    }
    return undefined;
  };
  const running = await viaCycles(`SlipwayNodes = '${node}' AND ExecutionStatus = 'Running'`);
  if (running) return running;
  if (ownDesc) return { kind: 'drain', id: own, node };
  const finished = await viaCycles(`SlipwayNodes = '${node}'`);
  if (finished) return finished;
  throw new CliError(`no drain of node ${node} found: no workflow ${own} and no cycle of ${node} in Temporal namespace ${session.settings.namespace}`);
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
      return { kind: 'drain', id: ref.id, node: p.node };
    case 'maintenanceNode':
      return { kind: 'drain', id: maintenanceDrainWorkflowId(p.node), node: p.node };
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
  return { kind: 'drain', id: maintenanceDrainWorkflowId(node), node };
}
