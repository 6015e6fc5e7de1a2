// Shared fixtures for tests on the local stack: a client, throw-away namespaces, and the audit log.
import { AppsV1Api, PolicyV1Api, type V1Pod } from '@kubernetes/client-node';
import { createKube, type Kube } from '../../kube/client.js';
import { createReadyNamespace } from '../../starter/namespace.js';
import { deleteNodeGroups } from '../../stack/kwok/nodes.js';
import { auditMark, readAuditSince, type AuditEvent } from '../../stack/audit-log.js';

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

/**
 * Returns once kube-scheduler has seen `node`'s cordon. The scheduler reads nodes from its own
 * watch cache, so a pod created just after the cordon patch may still be placed on the node (a
 * real cluster's race, which a drain survives by re-listing). A test that asserts where a
 * replacement lands waits here first: a probe pod that can only go to `node` is reported
 * Unschedulable by the scheduler only when its cache has the cordon.
 */
export async function schedulerSeesCordon(c: Kube, namespace: string, node: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; ; attempt++) {
    const name = `cordon-probe-${Date.now().toString(36)}-${attempt}`;
    await c.core.createNamespacedPod({
      namespace,
      body: {
        metadata: { name, labels: { 'example.com/test-probe': 'cordon' } },
        spec: { nodeSelector: { 'kubernetes.io/hostname': node }, terminationGracePeriodSeconds: 0, containers: [{ name: 'probe', image: 'registry.invalid/probe:1' }] },
      },
    });
    let verdict: 'seen' | 'not-yet' | undefined;
    while (!verdict) {
      if (Date.now() > deadline) throw new Error(`kube-scheduler has not seen the cordon of ${node} after ${timeoutMs} ms`);
      const pod = await c.core.readNamespacedPod({ name, namespace });
      const scheduled = pod.status?.conditions?.find((x) => x.type === 'PodScheduled');
      if (pod.spec?.nodeName) verdict = 'not-yet';
      else if (scheduled?.status === 'False' && scheduled.reason === 'Unschedulable' && /unschedulable/.test(scheduled.message ?? '')) verdict = 'seen';
      else await new Promise((r) => setTimeout(r, 100));
    }
    await c.core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 });
    if (verdict === 'seen') return;
  }
}

export const isRunning = (p: V1Pod) => p.status?.phase === 'Running' && !p.metadata?.deletionTimestamp;

/** The audit log's events (`stack/audit-log.ts`) and the control plane's own requests (`stack/invariants.ts`). */
export { byControlPlane } from '../../stack/invariants.js';
export type { AuditEvent } from '../../stack/audit-log.js';

// Where the log ended when this test file loaded the module (jest gives each file its own): a file's
// tests read only what was written since, across a rotation. The log grows past 200 MB over a full
// run, and reading all of it at every look cost seconds and a gigabyte of memory. Without a stack
// (no log) the mark is missing and a read fails then, not at import.
const fileStart = auditMark().catch(() => undefined);

/** Every ResponseComplete event in the apiserver's audit log since this test file started, in order. */
export async function readAudit(path = process.env.SLIPWAY_AUDIT_LOG!): Promise<AuditEvent[]> {
  return readAuditSince(await fileStart, path);
}
