// Object → workflow ID, both ways, in one place: the workflows, the bridge and the CLI build IDs
// here and the CLI reads them back. Pure (no Temporal imports), so workflows and clients share it.
// Kubernetes names and uids never contain '/', so every ID splits unambiguously.
import { API_VERSION } from '../api/names.js';

/** A drain started from the CLI: one per node; starting it again attaches to the running one. */
export const drainWorkflowId = (node: string) => `drain/${node}`;
/** The CLI's drains (drain/<node>); a cycle's and a maintenance's drains have IDs under their own. */
export const isCliDrainWorkflowId = (id: string) => id.startsWith('drain/');

/** One workflow per CycleNodeRequest; the uid makes a deleted-and-recreated object a new cycle. */
export const cycleWorkflowId = (r: { namespace: string; name: string; uid: string }) => `cnr/${r.namespace}/${r.name}/${r.uid}`;

/** One node's cycle, a child of its request. */
export const nodeCycleWorkflowId = (requestId: string, nodeName: string) => `${requestId}/node/${nodeName}`;

/** The drain a node's cycle runs as its child. */
export const nodeDrainWorkflowId = (nodeCycleId: string) => `${nodeCycleId}/drain`;

/** One workflow per NodeMaintenance (cluster-scoped); the uid makes a recreated object a new maintenance. */
export const maintenanceWorkflowId = (m: { name: string; uid: string }) => `nm/${m.name}/${m.uid}`;

/** The SlipwayObject search attribute of a maintenance's workflow (the bridge starts it with it, the CLI finds it by it). */
export const maintenanceObjectAttr = (name: string) => `NodeMaintenance/${name}`;
/** The SlipwayObject search attribute of a request's cycle (the bridge starts it with it, the CLI finds it by it). */
export const cycleObjectAttr = (r: { namespace: string; name: string }) => `CycleNodeRequest/${r.namespace}/${r.name}`;
/** The SlipwayObject search attribute of a NodeGroup's drift observer. */
export const nodeGroupObjectAttr = (name: string) => `NodeGroup/${name}`;

/** A NodeMaintenance as the involved object of an Event (cluster-scoped: its Events live in the default namespace). */
export const maintenanceEventRef = (m: { name: string; uid?: string }) => ({ kind: 'NodeMaintenance', apiVersion: API_VERSION, name: m.name, uid: m.uid });

/** The per-node coordinator of every maintenance that holds the node: the single writer of its state. */
export const maintenanceNodeWorkflowId = (node: string) => `nm-node/${node}`;

/** The drain a node coordinator runs (targets mode). */
export const maintenanceDrainWorkflowId = (node: string) => `nm-node/${node}/drain`;

/** The lock of one node group during a cycle (a child of the request that holds it): one per provider and group. */
export const nodeGroupLockId = (provider: string, group: string) => `lock/${provider}/${group}`;

/** One drift observer per NodeGroup (cluster-scoped); the uid makes a recreated object a new observer. */
export const nodeGroupObserverWorkflowId = (g: { name: string; uid: string }) => `ng/${g.name}/${g.uid}`;

export interface RequestIdParts {
  namespace: string;
  name: string;
  uid: string;
  /** cnr/<namespace>/<name>/<uid> */
  requestId: string;
}

export type ParsedWorkflowId =
  | { kind: 'drain'; node: string }
  | { kind: 'maintenance'; name: string; uid: string }
  | { kind: 'maintenanceNode'; node: string }
  | { kind: 'nodeGroupObserver'; name: string; uid: string }
  | { kind: 'maintenanceDrain'; node: string }
  | ({ kind: 'request' } & RequestIdParts)
  | ({ kind: 'nodeCycle'; node: string } & RequestIdParts)
  | ({ kind: 'nodeDrain'; node: string } & RequestIdParts);

/** What a Slipway workflow ID names, or undefined for anything else. */
export function parseWorkflowId(id: string): ParsedWorkflowId | undefined {
  const parts = id.split('/');
  if (parts.some((p) => p === '')) return undefined;
  if (parts[0] === 'drain' && parts.length === 2) return { kind: 'drain', node: parts[1]! };
  if (parts[0] === 'nm' && parts.length === 3) return { kind: 'maintenance', name: parts[1]!, uid: parts[2]! };
  if (parts[0] === 'ng' && parts.length === 3) return { kind: 'nodeGroupObserver', name: parts[1]!, uid: parts[2]! };
  if (parts[0] === 'nm-node' && parts.length === 2) return { kind: 'maintenanceNode', node: parts[1]! };
  if (parts[0] === 'nm-node' && parts.length === 3 && parts[2] === 'drain') return { kind: 'maintenanceDrain', node: parts[1]! };
  if (parts[0] !== 'cnr' || parts.length < 4) return undefined;
  const [, namespace, name, uid, ...rest] = parts as [string, string, string, string, ...string[]];
  const req: RequestIdParts = { namespace, name, uid, requestId: cycleWorkflowId({ namespace, name, uid }) };
  if (rest.length === 0) return { kind: 'request', ...req };
  if (rest[0] !== 'node' || !rest[1]) return undefined;
  if (rest.length === 2) return { kind: 'nodeCycle', node: rest[1], ...req };
  if (rest.length === 3 && rest[2] === 'drain') return { kind: 'nodeDrain', node: rest[1], ...req };
  return undefined;
}

/** Which drain a drain activity serves, by its workflow's ID: a NodeMaintenance's, the CLI's, else a cycle's (the chaos runner's kill points). */
export function drainCaller(workflowId: string | undefined): 'maintenance' | 'cli' | 'cycle' {
  const p = workflowId === undefined ? undefined : parseWorkflowId(workflowId);
  if (p?.kind === 'maintenanceDrain' || p?.kind === 'maintenanceNode') return 'maintenance';
  if (p?.kind === 'drain') return 'cli';
  return 'cycle';
}

/**
 * The drain of `node` that a workflow involving the node leads to: itself for a drain, the child
 * drain of a node's cycle, or of the request's cycle of that node.
 */
export function drainIdFor(workflowId: string, node: string): string | undefined {
  const p = parseWorkflowId(workflowId);
  if (!p) return undefined;
  if (p.kind === 'drain' || p.kind === 'nodeDrain' || p.kind === 'maintenanceDrain') return p.node === node ? workflowId : undefined;
  if (p.kind === 'maintenanceNode') return p.node === node ? maintenanceDrainWorkflowId(node) : undefined;
  if (p.kind === 'maintenance') return maintenanceDrainWorkflowId(node);
  if (p.kind === 'nodeGroupObserver') return undefined;
  if (p.kind === 'nodeCycle') return p.node === node ? nodeDrainWorkflowId(workflowId) : undefined;
  return nodeDrainWorkflowId(nodeCycleWorkflowId(workflowId, node));
}
