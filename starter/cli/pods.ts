// Which pods a finished drain has left on its node, from a fresh list of the node's pods.
import type { V1Pod } from '@kubernetes/client-node';

/**
 * Pods on the node that a finished drain should have taken away: not DaemonSet or static pods,
 * not finished, not ones the drain kept on purpose (skipped by label, rule or signal).
 */
export function podsLeft(pods: V1Pod[], kept: ReadonlySet<string>): string[] {
  return pods
    .filter((p) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed')
    .filter((p) => !p.metadata?.ownerReferences?.some((o) => o.kind === 'DaemonSet' && o.controller))
    .filter((p) => !p.metadata?.annotations?.['kubernetes.io/config.mirror'])
    .map((p) => ({ key: `${p.metadata?.namespace}/${p.metadata?.name}`, terminating: Boolean(p.metadata?.deletionTimestamp) }))
    .filter((p) => !kept.has(p.key))
    .map((p) => `${p.key}${p.terminating ? ' (terminating)' : ''}`)
    .sort();
}
