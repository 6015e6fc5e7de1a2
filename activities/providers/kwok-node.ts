// A kwok Node: a Node object that kwok (watching the kwok.x-k8s.io/node annotation) animates as
// if a kubelet ran it. The kwok provider launches replacements with it; the local stack's fake node
// groups (stack/kwok/nodes.ts) and the main job use the same shape, so it lives on the provider side.
import type { CoreV1Api, V1Node } from '@kubernetes/client-node';
import { apiStatus } from '../../kube/client.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

export interface FakeNodeSpec {
  name: string;
  nodeGroup: string;
  zone?: string;
  instanceType?: string;
  providerID?: string;
  labels?: Record<string, string>;
}

export function fakeNode(spec: FakeNodeSpec): V1Node {
  const zone = spec.zone ?? 'us-east-1a';
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: spec.name,
      annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
      labels: {
        'kubernetes.io/hostname': spec.name,
        'kubernetes.io/os': 'linux',
        'kubernetes.io/arch': 'amd64',
        'topology.kubernetes.io/zone': zone,
        'topology.kubernetes.io/region': zone.replace(/[a-z]$/, ''),
        'node.kubernetes.io/instance-type': spec.instanceType ?? 'm5.large',
        'type': 'kwok',
        [NODE_GROUP_LABEL]: spec.nodeGroup,
        ...spec.labels,
      },
    },
    spec: { providerID: spec.providerID ?? `kwok://${spec.name}` },
    status: {
      allocatable: { cpu: '32', memory: '128Gi', pods: '110' },
      capacity: { cpu: '32', memory: '128Gi', pods: '110' },
    },
  };
}

/** Creates the node unless it exists (idempotent). */
export async function ensureNode(core: CoreV1Api, node: V1Node): Promise<void> {
  try {
    await core.createNode({ body: node });
  } catch (err) {
    if (apiStatus(err) !== 409) throw err;
  }
}
