// Shared fixtures for tests on the local stack: a client, throw-away namespaces, and the audit log.
import { AppsV1Api, PolicyV1Api, type V1Pod } from '@kubernetes/client-node';
import { createKube, type Kube } from '../../activities/kube.js';
import { createReadyNamespace } from '../../starter/namespace.js';
import { deleteNodeGroups } from '../../stack/kwok/nodes.js';
import { auditOffset, readAuditSince, type AuditEvent } from '../../stack/invariants.js';

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

/** The audit log's events and the control plane's own requests: one home, `stack/invariants.ts`. */
export { byControlPlane, type AuditEvent } from '../../stack/invariants.js';

// The log's size when this test file loaded the module (jest gives each file its own): a file's tests
// read only what was written since. The log grows to 200 MB over a full run, and reading all of it
// at every look cost seconds and a gigabyte of memory.
const fileStart = auditOffset().catch(() => 0);

/** Every ResponseComplete event in the apiserver's audit log since this test file started, in order. */
export async function readAudit(path = process.env.SLIPWAY_AUDIT_LOG!): Promise<AuditEvent[]> {
  return readAuditSince(await fileStart, path);
}
