// What a CycleNodeRequest should look like, as one pure function of what the bridge knows: the
// object (from the cache), its workflow as the tracker last saw it, its CycleNodeStatus objects
// (from the cache) and the time. The reconciler computes this first and then only writes it, so
// the whole mapping is tested without a cluster (test/unit/bridge-desired.test.ts).
import { CycleNodeRequestSpec, CycleSettings, type CycleNodeRequestStatus, type CycleNodeStatusStatus } from '../../../api/cycle-node-request.js';
import type { CycleNodeStatus } from '../../../workflows/cycle/types.js';
import { objectKey } from '../../../kube/controller/cache.js';
import { cycleNodeStatusName, requestLabelValue } from './names.js';
import { ownerReference, type CycleNodeRequestObject, type CycleNodeStatusObject } from './objects.js';
import { closedNodes, closedState, invalidSpecStatus, mayCreateNodeStatuses, nodeStatus, podLeftEvents, requestStatus, stateFromStatus, statusEvents } from './status.js';
import { invalidSpecMessage, mergePatchOf, statusChanged, type StatusEvent } from '../workflow-status.js';
import type { Tracked } from '../tracker.js';
import { CYCLE_FINALIZER, CYCLE_REQUEST_LABEL } from '../../../api/cycle-node-request.js';
import { API_VERSION } from '../../../api/names.js';

/** The request's workflow as far as the bridge knows (../tracker.ts). */
export type WorkflowView = Pick<Tracked, 'workflowId' | 'runId' | 'generation' | 'state' | 'closed' | 'taskFailure'>;

export interface DesiredInput {
  obj: CycleNodeRequestObject;
  /** undefined: no workflow is known for this object (none started yet, or none ever). */
  workflow: WorkflowView | undefined;
  /** A CycleNodeStatus from the cache by `namespace/name`. */
  nodeStatus: (key: string) => CycleNodeStatusObject | undefined;
  now: Date;
  /** The namespaces whose requests the bridge may act on (SLIPWAY_ALLOWED_NAMESPACES); undefined: all. */
  allowedNamespaces?: readonly string[];
}

/** One CycleNodeStatus to bring up to date: created first when missing, then its status patched. */
export interface NodeStatusWrite {
  name: string;
  node: CycleNodeStatus;
  /** The object to create (it does not exist yet). */
  create?: CycleNodeStatusObject;
  /** The merge patch of its status; undefined when the status is right already. */
  patch?: Record<string, unknown>;
}

export interface Desired {
  /** The finalizers to set, or undefined to leave them. */
  finalizers?: string[];
  /** The status to write (as a merge patch of the stored one), or undefined when it is right already. */
  status?: { next: CycleNodeRequestStatus; patch: Record<string, unknown> };
  /** The Events that go with the status change (written before it: a retry finds them deduplicated). */
  events: StatusEvent[];
  nodeStatuses: NodeStatusWrite[];
  /** Why no workflow may be started: the spec is invalid (the status says so). */
  invalidSpec?: string;
}

/**
 *   deleting, finalizer held   → mirror the workflow (if any); remove the finalizer once it is closed (or there is none)
 *   no workflow, invalid spec  → status Failed/InvalidSpec with an InvalidSpec Event; no finalizer
 *   otherwise                  → finalizer held; the workflow's state (if any) mirrored into status and CycleNodeStatus objects
 */
export function desired(i: DesiredInput): Desired {
  const { obj } = i;
  const out: Desired = { events: [], nodeStatuses: [] };
  const has = obj.metadata.finalizers?.includes(CYCLE_FINALIZER) ?? false;
  if (obj.metadata.deletionTimestamp) {
    if (!has) return out;
    if (i.workflow) Object.assign(out, mirror(obj, i.workflow, i.nodeStatus, i.now));
    if (!i.workflow || i.workflow.closed) out.finalizers = (obj.metadata.finalizers ?? []).filter((f) => f !== CYCLE_FINALIZER);
    return out;
  }
  if (!i.workflow) {
    // Who may create a request may disrupt nodes: only namespaces the bridge is configured for (the trust boundary).
    const refused = namespaceRefusal(obj.metadata.namespace, i.allowedNamespaces);
    const parsed = CycleNodeRequestSpec.safeParse(obj.spec);
    const message = refused ?? (parsed.success ? undefined : invalidSpecMessage(parsed.error));
    if (message !== undefined) {
      const reason = refused ? 'NamespaceNotAllowed' : 'InvalidSpec';
      out.invalidSpec = message;
      const next = invalidSpecStatus(obj.status, message, obj.metadata.generation, i.now);
      if (statusChanged(obj.status, next)) {
        out.status = { next, patch: mergePatchOf(obj.status, next) };
        out.events.push({ type: 'Warning', reason, message, dedup: `${reason}/${obj.metadata.generation}/${message}` });
      }
      return out;
    }
  }
  if (!has) out.finalizers = [...(obj.metadata.finalizers ?? []), CYCLE_FINALIZER];
  if (i.workflow) Object.assign(out, mirror(obj, i.workflow, i.nodeStatus, i.now));
  return out;
}

/** Why a request in `namespace` is refused, or undefined when the bridge may act on it. */
export function namespaceRefusal(namespace: string, allowed: readonly string[] | undefined): string | undefined {
  if (!allowed || allowed.includes(namespace)) return undefined;
  return `namespace ${namespace} is not one this bridge may act for (SLIPWAY_ALLOWED_NAMESPACES: ${allowed.join(', ') || 'none'}): no node is touched`;
}

/** The workflow's state as status (with the Events its change calls for) and as CycleNodeStatus objects. */
function mirror(obj: CycleNodeRequestObject, w: WorkflowView, nodeStatusOf: DesiredInput['nodeStatus'], now: Date): Pick<Desired, 'status' | 'events' | 'nodeStatuses'> {
  const prevState = obj.status?.workflowId === w.workflowId ? stateFromStatus(obj.status) : undefined;
  const state = w.closed ? closedState(w.closed, w.state ?? prevState, w.workflowId) : w.state;
  const taskFailure = w.closed ? undefined : w.taskFailure;
  const requestLabel = `${CYCLE_REQUEST_LABEL}=${requestLabelValue(obj.metadata.name)}`;
  const next = requestStatus({ prev: obj.status, workflow: { workflowId: w.workflowId, runId: w.runId }, state, observedGeneration: w.generation, taskFailure, now, requestLabel });
  const changed = statusChanged(obj.status, next);
  // Per-node objects only from the workflow's own word: a query answer, or its result.
  const nodes = w.closed ? closedNodes(w.closed) : w.state?.nodes;
  const cycledAlready = (node: string) => nodeStatusOf(objectKey(obj.metadata.namespace, cycleNodeStatusName(obj.metadata.name, node)))?.status?.phase === 'Successful';
  return {
    status: changed ? { next, patch: mergePatchOf(obj.status, next) } : undefined,
    events: changed ? [...statusEvents(obj.status, next, w.workflowId, taskFailure), ...podLeftEvents(obj.status, nodes ?? [], w.workflowId, cycledAlready)] : [],
    nodeStatuses: nodes ? nodeStatusWrites(obj, nodes, mayCreateNodeStatuses(obj, w.workflowId), nodeStatusOf) : [],
  };
}

/**
 * The CycleNodeStatus writes for the workflow's nodes: missing ones are created only while the
 * request lives; one owned by a previous request of the same name is left to garbage collection.
 */
function nodeStatusWrites(req: CycleNodeRequestObject, nodes: CycleNodeStatus[], mayCreate: boolean, nodeStatusOf: DesiredInput['nodeStatus']): NodeStatusWrite[] {
  const { namespace, name: requestName, uid } = req.metadata;
  const parsedSettings = CycleSettings.safeParse((req.spec as { cycleSettings?: unknown } | undefined)?.cycleSettings ?? {});
  const cycleSettings = parsedSettings.success ? parsedSettings.data : CycleSettings.parse({});
  const out: NodeStatusWrite[] = [];
  for (const n of nodes) {
    const name = cycleNodeStatusName(requestName, n.nodeName);
    const cur = nodeStatusOf(objectKey(namespace, name));
    if (cur && !cur.metadata.ownerReferences?.some((o) => o.uid === uid)) continue;
    if (!cur && !mayCreate) continue; // finished or deleted: what is gone stays gone
    // Slipway writes the spec once, so a new object's generation is 1.
    const next: CycleNodeStatusStatus = nodeStatus(n, cur?.metadata.generation ?? 1);
    const patch = statusChanged(cur?.status, next) ? mergePatchOf(cur?.status, next) : undefined;
    const create: CycleNodeStatusObject | undefined = cur
      ? undefined
      : {
          apiVersion: API_VERSION,
          kind: 'CycleNodeStatus',
          metadata: { name, namespace, labels: { [CYCLE_REQUEST_LABEL]: requestLabelValue(requestName) }, ownerReferences: [ownerReference(req)] },
          spec: { nodeName: n.nodeName, requestName, cycleSettings },
        };
    if (create || patch) out.push({ name, node: n, create, patch });
  }
  return out;
}
