// What a user has in hand, read without connecting to anything: a request (cnr/<ns>/<name>,
// <ns>/<name>), a maintenance (nm/<name>), a node name, or a workflow ID (drain/<node>,
// cnr/<ns>/<name>/<uid>[/node/<node>[/drain]], nm/<name>/<uid>, nm-node/<node>[/drain]).
import { parseWorkflowId, type ParsedWorkflowId } from '../../workflows/ids.js';
import { UsageError } from './errors.js';

export type Ref =
  | { kind: 'request'; namespace: string; name: string }
  | { kind: 'maintenance'; name: string }
  | { kind: 'node'; node: string }
  | { kind: 'workflow'; id: string; parsed: ParsedWorkflowId };

/** RFC 1123 subdomain: node names, object names. */
export const isDnsSubdomain = (s: string) =>
  s.length <= 253 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(s);
/** RFC 1123 label: namespaces. */
export const isDnsLabel = (s: string) => s.length <= 63 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(s);

export const REF_FORMS =
  'a request (<namespace>/<name>, cnr/<namespace>/<name>, or cnr/<name> with -n), a maintenance (nm/<name>), a node name, or a drain ID (drain/<node>, <request id>/node/<node>/drain, nm-node/<node>/drain)';

export function nodeName(s: string, what = 'node name'): string {
  if (!isDnsSubdomain(s)) throw new UsageError(`"${s}" is not a valid ${what} (lowercase letters, digits, '-' and '.')`);
  return s;
}

function objectRef(namespace: string, name: string, input: string, what: string): { namespace: string; name: string } {
  if (!isDnsLabel(namespace) || !isDnsSubdomain(name)) throw new UsageError(`"${input}" is not a valid ${what} <namespace>/<name>`);
  return { namespace, name };
}

/** A NodeMaintenance's name (cluster-scoped: a DNS subdomain). */
export function maintenanceName(s: string): string {
  if (!isDnsSubdomain(s)) throw new UsageError(`"${s}" is not a valid NodeMaintenance name (lowercase letters, digits, '-' and '.')`);
  return s;
}

/** <namespace>/<name> of a pod, or <name> with -n. */
export function podRef(s: string, namespace?: string): { namespace: string; name: string } {
  if (namespace !== undefined && !s.includes('/')) return objectRef(namespace, s, s, 'pod');
  const parts = s.split('/');
  if (parts.length !== 2) throw new UsageError(`expected a pod as <namespace>/<name> (or <name> with -n), got "${s}"`);
  return objectRef(parts[0]!, parts[1]!, s, 'pod');
}

/** namespace: -n, for cnr/<name>. */
export function parseRef(s: string, namespace?: string): Ref {
  const id = parseWorkflowId(s);
  if (id) {
    const node = 'node' in id ? id.node : undefined;
    if (node !== undefined) nodeName(node);
    if ('namespace' in id) objectRef(id.namespace, id.name, s, 'request');
    if (id.kind === 'maintenance') maintenanceName(id.name);
    return { kind: 'workflow', id: s, parsed: id };
  }
  const parts = s.split('/');
  if (parts.length === 2 && parts[0] === 'cnr' && namespace !== undefined) return { kind: 'request', ...objectRef(namespace, parts[1]!, s, 'request') };
  if (parts.length === 2 && parts[0] === 'nm') return { kind: 'maintenance', name: maintenanceName(parts[1]!) };
  if (parts.length === 3 && parts[0] === 'cnr') return { kind: 'request', ...objectRef(parts[1]!, parts[2]!, s, 'request') };
  if (parts.length === 2 && parts[0] !== 'drain' && parts[0] !== 'cnr' && parts[0] !== 'nm-node') return { kind: 'request', ...objectRef(parts[0]!, parts[1]!, s, 'request') };
  if (parts.length === 1 && isDnsSubdomain(s)) return { kind: 'node', node: s };
  throw new UsageError(`"${s}" is not ${REF_FORMS}`);
}
