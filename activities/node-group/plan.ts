// One pass of the drift observer, decided without I/O: from the NodeGroup, the drifted instances its
// provider reported, the Nodes and the requests already made for it, what to write to its status,
// whether to create a CycleNodeRequest, and the Event to record. The activity (observe.ts) reads
// and writes; this decides, so every rule has a fast test.
import { createHash } from 'node:crypto';
import type { ZodError } from 'zod';
import type { CycleNodeRequestSpecInput } from '../../api/cycle-node-request.js';
import { matchesSelector } from '../../api/label-selector.js';
import type { NodeGroupSpec, NodeGroupStatus } from '../../api/node-group-kind.js';
import { setCondition } from '../../shared/conditions.js';
import type { DriftedInstance } from '../providers/types.js';

export const DRIFTED = 'Drifted';

export interface PassNode {
  name: string;
  providerID?: string;
  labels?: Record<string, string>;
}

export interface PassRequest {
  namespace: string;
  name: string;
  phase?: string;
  /** Made from this NodeGroup (labelled with its name). */
  ours: boolean;
  /** The cloud node groups it names. */
  groups: string[];
}

export interface PassInput {
  name: string;
  uid: string;
  generation?: number;
  /** The parsed spec, or why it does not parse. */
  spec: { ok: true; value: NodeGroupSpec; input: { template: CycleNodeRequestSpecInput } } | { ok: false; error: string };
  disabled: boolean;
  /** Per node group of the template: its drifted instances, or why it could not be asked. */
  drift: Array<{ group: string; instances?: DriftedInstance[]; error?: string }>;
  nodes: PassNode[];
  /** The requests made from this NodeGroup, and any other naming one of its cloud node groups. */
  requests: PassRequest[];
  status?: NodeGroupStatus;
  now: Date;
  /** The observer's schedule, when it has one: whether a window is open now, and how it reads. */
  window?: { open: boolean; text: string };
}

export interface PassPlan {
  status: NodeGroupStatus;
  /** The request to create (a retry creates the same name: 409, already done). */
  create?: { name: string; spec: CycleNodeRequestSpecInput };
  event?: { type: 'Normal' | 'Warning'; reason: string; message: string; dedupKey: string };
}

const TERMINAL = new Set(['Successful', 'Failed']);

/** The request's name for this drift: the NodeGroup's name and a hash of its uid and the drifted nodes, so a retry or a second bridge makes the same one. */
export function driftRequestName(group: string, uid: string, nodes: string[]): string {
  const hash = createHash('sha256').update(`${uid}/${[...nodes].sort().join(',')}`).digest('hex').slice(0, 8);
  return `${group.slice(0, 253 - 16).replace(/[.-]+$/, '')}-drift-${hash}`;
}

/** A zod error as one line naming each field. */
export function specError(err: ZodError): string {
  return err.issues.map((i) => `spec.${i.path.join('.')}: ${i.message}`).join('; ');
}

export function planDriftPass(i: PassInput): PassPlan {
  const observedTime = i.now.toISOString().replace(/\.\d+Z$/, 'Z');
  const status = (drifted: NodeGroupStatus['driftedNodes'], c: { status: 'True' | 'False' | 'Unknown'; reason: string; message: string }, lastRequest = i.status?.lastRequest): NodeGroupStatus => ({
    ...(i.generation !== undefined ? { observedGeneration: i.generation } : {}),
    observedTime,
    driftedNodes: drifted,
    ...(lastRequest ? { lastRequest } : {}),
    message: c.message,
    conditions: setCondition(i.status?.conditions, { type: DRIFTED, ...c, observedGeneration: i.generation }, i.now),
  });

  if (!i.spec.ok) {
    const message = `invalid NodeGroup: ${i.spec.error}; nothing is observed or created until it is fixed`;
    return { status: status([], { status: 'Unknown', reason: 'InvalidSpec', message }), event: { type: 'Warning', reason: 'InvalidSpec', message, dedupKey: `${i.uid}/invalid/${i.generation ?? 0}` } };
  }
  const failed = i.drift.filter((d) => d.error);
  if (failed.length) {
    const message = `cannot look for drift: ${failed.map((d) => `node group ${d.group}: ${d.error}`).join('; ')}`;
    return { status: status(i.status?.driftedNodes ?? [], { status: 'Unknown', reason: 'NodeGroupUnreadable', message }), event: { type: 'Warning', reason: 'NodeGroupUnreadable', message, dedupKey: `${i.uid}/unreadable/${i.generation ?? 0}/${failed.map((d) => d.group).join(',')}` } };
  }

  // Drifted instances, as the template's selected Nodes (an instance not yet registered as a Node is not cycled).
  const { template, requestNamespace } = i.spec.value;
  const templateInput = i.spec.input.template;
  const reasons = new Map(i.drift.flatMap((d) => d.instances ?? []).map((x) => [x.providerID, x.reason]));
  const drifted = i.nodes
    .filter((n) => n.providerID && reasons.has(n.providerID) && matchesSelector(template.selector, n.labels))
    .map((n) => ({ name: n.name, reason: reasons.get(n.providerID!)! }))
    .sort((a, b) => a.name.localeCompare(b.name));
  if (drifted.length === 0) return { status: status([], { status: 'False', reason: 'NoDrift', message: 'every selected node matches its group\'s launch template' }) };

  const names = drifted.map((d) => d.name);
  const summary = `${drifted.length} node${drifted.length > 1 ? 's' : ''} drifted (${drifted.slice(0, 5).map((d) => `${d.name}: ${d.reason}`).join('; ')}${drifted.length > 5 ? '; …' : ''})`;
  if (i.disabled) return { status: status(drifted, { status: 'True', reason: 'ObserverDisabled', message: `${summary}; the observer is disabled by its annotation: nothing created` }) };
  if (i.window && !i.window.open) return { status: status(drifted, { status: 'True', reason: 'OutsideSchedule', message: `${summary}; outside its schedule (${i.window.text}): the request is made in the next window` }) };
  // Never a second request while one runs for these groups: its own, or anyone's naming one of them.
  const groups = new Set(i.drift.map((d) => d.group));
  const running = i.requests.filter((r) => !TERMINAL.has(r.phase ?? '') && (r.ours || r.groups.some((g) => groups.has(g)))).map((r) => `${r.namespace}/${r.name}`).sort();
  if (running.length) return { status: status(drifted, { status: 'True', reason: 'RequestRunning', message: `${summary}; waiting for CycleNodeRequest ${running.join(', ')} to finish` }, running[0]) };

  const name = driftRequestName(i.name, i.uid, names);
  const earlier = i.requests.find((r) => r.ours && r.namespace === requestNamespace && r.name === name);
  if (earlier) {
    // The same nodes were tried and the request ended: not tried again on its own (no retry loop); deleting it retries.
    return { status: status(drifted, { status: 'True', reason: 'RequestEnded', message: `${summary}; CycleNodeRequest ${name} for these nodes ended ${earlier.phase}: delete it to try again` }, `${requestNamespace}/${name}`) };
  }
  const spec: CycleNodeRequestSpecInput = { ...templateInput, nodeNames: names };
  return {
    status: status(drifted, { status: 'True', reason: 'RequestCreated', message: `${summary}; created CycleNodeRequest ${requestNamespace}/${name}` }, `${requestNamespace}/${name}`),
    create: { name, spec },
    event: { type: 'Normal', reason: 'DriftDetected', message: `${summary}: created CycleNodeRequest ${requestNamespace}/${name}`, dedupKey: `${i.uid}/${name}` },
  };
}
