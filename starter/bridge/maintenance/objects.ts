// The bridge's Kubernetes calls on NodeMaintenances (cluster-scoped, so no namespace anywhere):
// list for the reflector, get, status merge patch, finalizers (with the resourceVersion read, 409
// on a concurrent change) and spec.stage=Complete on deletion (NM-2.12).
import { CustomObjectsApi, type KubeConfig, type KubernetesObject, type V1ObjectMeta } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../../../api/crd.js';
import { NODE_MAINTENANCE, type NodeMaintenanceStatus } from '../../../api/node-maintenance.js';
import { apiStatus } from '../../../kube/client.js';
import type { ListPage } from '../../../kube/controller/reflector.js';
import { collectionPath } from '../kube-objects.js';
import { mergePatch } from '../../../kube/patch.js';

export interface NodeMaintenanceObject extends KubernetesObject {
  metadata: V1ObjectMeta & { name: string; uid: string };
  spec?: unknown;
  status?: NodeMaintenanceStatus;
}

export const MAINTENANCE_RESOURCE = { group: GROUP, version: VERSION, plural: NODE_MAINTENANCE.plural } as const;

export class MaintenanceObjects {
  readonly custom: CustomObjectsApi;

  constructor(kc: KubeConfig) {
    this.custom = kc.makeApiClient(CustomObjectsApi);
  }

  readonly path = () => collectionPath(MAINTENANCE_RESOURCE);

  async list(page: { limit: number; _continue?: string; labelSelector?: string }): Promise<ListPage<NodeMaintenanceObject>> {
    return (await this.custom.listClusterCustomObject({ ...MAINTENANCE_RESOURCE, ...page })) as ListPage<NodeMaintenanceObject>;
  }

  /** The object as stored now, or undefined when gone. */
  async get(name: string): Promise<NodeMaintenanceObject | undefined> {
    try {
      return (await this.custom.getClusterCustomObject({ ...MAINTENANCE_RESOURCE, name })) as NodeMaintenanceObject;
    } catch (err) {
      if (apiStatus(err) === 404) return undefined;
      throw err;
    }
  }

  /** Sets metadata.finalizers, failing with 409 if the object changed since `obj` was read. */
  async setFinalizers(obj: NodeMaintenanceObject, finalizers: string[]): Promise<NodeMaintenanceObject> {
    const body = { metadata: { finalizers, resourceVersion: obj.metadata.resourceVersion } };
    return (await this.custom.patchClusterCustomObject({ ...MAINTENANCE_RESOURCE, name: obj.metadata.name, body }, mergePatch)) as NodeMaintenanceObject;
  }

  /** Merge patch of the status subresource. */
  async patchStatus(obj: NodeMaintenanceObject, status: Record<string, unknown>): Promise<NodeMaintenanceObject> {
    return (await this.custom.patchClusterCustomObjectStatus({ ...MAINTENANCE_RESOURCE, name: obj.metadata.name, body: { status } }, mergePatch)) as NodeMaintenanceObject;
  }

  /** spec.stage, for the object `obj` is (uid precondition: a recreated object of the same name is left alone). */
  async patchStage(obj: NodeMaintenanceObject, stage: string): Promise<NodeMaintenanceObject> {
    const body = { metadata: { uid: obj.metadata.uid }, spec: { stage } };
    return (await this.custom.patchClusterCustomObject({ ...MAINTENANCE_RESOURCE, name: obj.metadata.name, body }, mergePatch)) as NodeMaintenanceObject;
  }
}
