// The drift observer's reads and writes of its NodeGroup (one kind per module: the RBAC test maps
// each module's custom-object calls to the kind it names).
import { CustomObjectsApi } from '@kubernetes/client-node';
import { NODE_GROUP, type NodeGroupObject, type NodeGroupStatus } from '../../api/node-group-kind.js';
import { apiStatus, type Kube } from '../../kube/client.js';
import { mergePatch } from '../../kube/patch.js';

const ref = { group: NODE_GROUP.group, version: NODE_GROUP.version, plural: NODE_GROUP.plural };

export function nodeGroupObjects(kube: Kube) {
  const api = kube.config.makeApiClient(CustomObjectsApi);
  return {
    /** The NodeGroup, or undefined when it is gone. */
    async read(name: string): Promise<NodeGroupObject | undefined> {
      try {
        return (await api.getClusterCustomObject({ ...ref, name })) as NodeGroupObject;
      } catch (err) {
        if (apiStatus(err) === 404) return undefined;
        throw err;
      }
    },
    /** Merge-patches its status; false when it is gone. */
    async writeStatus(name: string, status: NodeGroupStatus): Promise<boolean> {
      try {
        await api.patchClusterCustomObjectStatus({ ...ref, name, body: { status } }, mergePatch);
        return true;
      } catch (err) {
        if (apiStatus(err) === 404) return false;
        throw err;
      }
    },
  };
}
