// The drift observer's reads and writes of CycleNodeRequests: every request (one running for the
// group holds the observer back), and the one it makes, created once (409: made already).
import { CustomObjectsApi } from '@kubernetes/client-node';
import { CYCLE_NODE_REQUEST, nodeGroupsOf, type CycleNodeRequestSpecInput } from '../../api/cycle-node-request.js';
import { FROM_NODE_GROUP_LABEL } from '../../api/node-group-kind.js';
import { apiStatus, type Kube } from '../../kube/client.js';
import type { PassRequest } from './plan.js';
import { API_VERSION } from '../../api/names.js';

const ref = { group: CYCLE_NODE_REQUEST.group, version: CYCLE_NODE_REQUEST.version, plural: CYCLE_NODE_REQUEST.plural };

interface RequestObject {
  metadata: { name: string; namespace: string; labels?: Record<string, string> };
  spec?: { nodeGroupName?: string; nodeGroupsList?: string[] };
  status?: { phase?: string };
}

export function cycleRequests(kube: Kube) {
  const api = kube.config.makeApiClient(CustomObjectsApi);
  return {
    /** Every CycleNodeRequest in the cluster, as the observer weighs them for NodeGroup `from`. */
    async list(from: string): Promise<PassRequest[]> {
      const all = (await api.listClusterCustomObject(ref)) as { items: RequestObject[] };
      return all.items.map((r) => ({
        namespace: r.metadata.namespace,
        name: r.metadata.name,
        phase: r.status?.phase,
        ours: r.metadata.labels?.[FROM_NODE_GROUP_LABEL] === from,
        groups: nodeGroupsOf(r.spec ?? {}),
      }));
    },
    /** Creates the request made from NodeGroup `from`; one made already (a retry) is done. */
    async create(from: string, namespace: string, name: string, spec: CycleNodeRequestSpecInput): Promise<void> {
      const body = {
        apiVersion: API_VERSION,
        kind: CYCLE_NODE_REQUEST.kind,
        metadata: { name, namespace, labels: { [FROM_NODE_GROUP_LABEL]: from } },
        spec,
      };
      try {
        await api.createNamespacedCustomObject({ ...ref, namespace, body });
      } catch (err) {
        if (apiStatus(err) !== 409) throw err;
      }
    },
  };
}
