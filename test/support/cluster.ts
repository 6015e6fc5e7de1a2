// Shared fixtures for tests on the local stack: a client, throw-away namespaces, and the audit log.
import { readFile } from 'node:fs/promises';
import { AppsV1Api, PolicyV1Api, type V1Pod } from '@kubernetes/client-node';
import { createKube, type Kube } from '../../activities/kube.js';
import { createReadyNamespace } from '../../starter/namespace.js';
import { deleteNodeGroups } from '../../stack/kwok/nodes.js';

export interface TestCluster extends Kube {
  apps: AppsV1Api;
  policy: PolicyV1Api;
}

export function testCluster(): TestCluster {
  const kube = createKube();
  return { ...kube, apps: kube.config.makeApiClient(AppsV1Api), policy: kube.config.makeApiClient(PolicyV1Api) };
}

let seq = 0;
/** A unique, DNS-safe name for this test run. */
export function uniqueName(prefix: string): string {
  return `${prefix}-${Date.now().toString(36)}-${(seq++).toString(36)}`;
}

/** Creates a namespace and waits for its default ServiceAccount (pods are refused until it exists). */
export async function createNamespace(c: TestCluster, name: string): Promise<void> {
  await c.core.createNamespace({ body: { metadata: { name } } }); // a test's namespace is new: a clash is a bug
  await createReadyNamespace(c.core, name);
}

/** Deletes the nodes of a node group: tests leave no fake nodes behind (each costs kwok heartbeats). */
export const deleteGroupNodes = (c: Kube, group: string): Promise<number> => deleteNodeGroups(c.core, (g) => g === group);

export const isRunning = (p: V1Pod) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp;

export interface AuditEvent {
  verb: string;
  stage: string;
  requestReceivedTimestamp: string;
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  user?: { username?: string };
  userAgent?: string;
}

/**
 * Requests the local control plane makes on its own (kube-controller-manager patches node taints and
 * annotations, the scheduler binds, kwok plays the kubelets): a test asserting on what Slipway wrote skips these.
 */
export const byControlPlane = (e: AuditEvent): boolean => /kube-controller-manager|kube-scheduler|kwok/.test(e.userAgent ?? '');

/** Every ResponseComplete event in the apiserver's audit log, in order. */
export async function readAudit(path = process.env.SLIPWAY_AUDIT_LOG!): Promise<AuditEvent[]> {
  const text = await readFile(path, 'utf8');
  return text
    .split('\n')
    .filter((l) => l.trim().length > 0)
    .map((l) => JSON.parse(l) as AuditEvent)
    .filter((e) => e.stage === 'ResponseComplete');
}
