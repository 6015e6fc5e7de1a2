// A node whose kubelet is gone, for as long as a test needs. kwok on this stack goes on posting a
// node's status after the node loses its kwok annotation (Ready True again within ~10 s), so a
// ValidatingAdmissionPolicy refuses any status write that would make a marked node Ready again: a
// dead kubelet sends none. Ready is then set Unknown, as the node lifecycle controller would after
// its grace period (at once here instead of after ~40 s).
import { AdmissionregistrationV1Api, type CoreV1Api, type V1NodeCondition } from '@kubernetes/client-node';
import type { TestCluster } from './cluster.js';
import { mergePatch } from '../../kube/patch.js';
import { waitFor } from './wait.js';

const DEAD = 'slipway.test/kubelet-dead';
const POLICY = 'slipway-test-dead-kubelet';
const KWOK_ANNOTATION = 'kwok.x-k8s.io/node';

const readyAs = (conditions: V1NodeCondition[] | undefined, status: string, reason: string, message: string) =>
  (conditions ?? []).map((c) => (c.type === 'Ready' ? { ...c, status, reason, message } : c));

/** The policy (cluster-wide, matching only nodes labelled DEAD), created once and left: it touches no other node. */
async function ensurePolicy(c: TestCluster): Promise<void> {
  const adm = c.config.makeApiClient(AdmissionregistrationV1Api);
  const exists = (err: unknown) => (err as { code?: number }).code === 409;
  await adm.createValidatingAdmissionPolicy({
    body: {
      metadata: { name: POLICY },
      spec: {
        failurePolicy: 'Fail',
        matchConstraints: { resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['UPDATE'], resources: ['nodes/status'] }] },
        validations: [{
          expression: `!has(object.metadata.labels) || !('${DEAD}' in object.metadata.labels) || !has(object.status.conditions) || object.status.conditions.all(c, c.type != 'Ready' || c.status != 'True')`,
          message: 'the kubelet of this node is dead (test)',
        }],
      },
    },
  }).catch((err: unknown) => { if (!exists(err)) throw err; });
  await adm.createValidatingAdmissionPolicyBinding({
    body: { metadata: { name: POLICY }, spec: { policyName: POLICY, validationActions: ['Deny'] } },
  }).catch((err: unknown) => { if (!exists(err)) throw err; });
}

/** Kills the node's kubelet: from now on its Ready stays Unknown. */
export async function killKubelet(c: TestCluster, name: string): Promise<void> {
  await ensurePolicy(c);
  await c.core.patchNode({ name, body: { metadata: { labels: { [DEAD]: 'true' }, annotations: { [KWOK_ANNOTATION]: null } } } }, mergePatch);
  // The policy takes effect once the apiserver has loaded it: a dry-run Ready True must be refused.
  await waitFor('the dead-kubelet policy in force', async () => {
    const node = await c.core.readNode({ name });
    const conditions = readyAs(node.status?.conditions, 'True', 'KubeletReady', 'probe');
    return c.core.patchNodeStatus({ name, body: { status: { conditions } }, dryRun: 'All' }, mergePatch).then(() => false, () => true);
  });
  await setUnknown(c.core, name);
  await waitFor('Ready Unknown', async () => (await c.core.readNode({ name })).status?.conditions?.find((x) => x.type === 'Ready')?.status === 'Unknown');
}

async function setUnknown(core: CoreV1Api, name: string): Promise<void> {
  const node = await core.readNode({ name });
  const conditions = readyAs(node.status?.conditions, 'Unknown', 'NodeStatusUnknown', 'Kubelet stopped posting node status.');
  await core.patchNodeStatus({ name, body: { status: { conditions } } }, mergePatch);
}
