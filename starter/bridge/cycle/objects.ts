// The bridge's Kubernetes calls on its custom resources, through CustomObjectsApi with raw JSON
// bodies: CycleNodeRequests (finalizer, status subresource) and CycleNodeStatuses (create, status).
// Metadata changes carry the resourceVersion they were computed from (409 on a concurrent change);
// status writes are merge patches of the status subresource.
import { CustomObjectsApi, type KubeConfig, type KubernetesObject, type V1ObjectMeta } from '@kubernetes/client-node';
import type { CycleNodeRequestStatus, CycleNodeStatusStatus, CycleSettings } from '../../../api/cycle-node-request.js';
import { CYCLE_NODE_REQUEST, CYCLE_NODE_STATUS } from '../../../api/cycle-node-request.js';
import { apiStatus } from '../../../kube/client.js';
import type { ListPage } from '../../../kube/controller/reflector.js';
import { collectionPath } from '../kube-objects.js';
import { mergePatch } from '../../../kube/patch.js';
import { API_VERSION } from '../../../api/names.js';

export interface CycleNodeRequestObject extends KubernetesObject {
  metadata: V1ObjectMeta & { name: string; namespace: string; uid: string };
  spec?: unknown;
  status?: CycleNodeRequestStatus;
}

export interface CycleNodeStatusObject extends KubernetesObject {
  metadata: V1ObjectMeta & { name: string; namespace: string };
  spec?: { nodeName: string; requestName: string; cycleSettings: CycleSettings };
  status?: CycleNodeStatusStatus;
}


export class CycleObjects {
  readonly custom: CustomObjectsApi;
  /** Only this namespace, or all when undefined. */
  constructor(
    kc: KubeConfig,
    readonly namespace?: string,
  ) {
    this.custom = kc.makeApiClient(CustomObjectsApi);
  }

  readonly requestsPath = () => collectionPath(CYCLE_NODE_REQUEST, this.namespace);
  readonly statusesPath = () => collectionPath(CYCLE_NODE_STATUS, this.namespace);

  listRequests(page: { limit: number; _continue?: string }): Promise<ListPage<CycleNodeRequestObject>> {
    return this.list(CYCLE_NODE_REQUEST, page);
  }

  listStatuses(page: { limit: number; _continue?: string; labelSelector?: string }): Promise<ListPage<CycleNodeStatusObject>> {
    return this.list(CYCLE_NODE_STATUS, page);
  }

  private async list<T>(r: typeof CYCLE_NODE_REQUEST | typeof CYCLE_NODE_STATUS, page: { limit: number; _continue?: string; labelSelector?: string }): Promise<ListPage<T>> {
    const { group, version, plural } = r;
    const res = this.namespace
      ? await this.custom.listNamespacedCustomObject({ group, version, plural, namespace: this.namespace, ...page })
      : await this.custom.listCustomObjectForAllNamespaces({ group, version, plural, ...page });
    return res as ListPage<T>;
  }

  /** The request as stored now, or undefined when gone. */
  async getRequest(namespace: string, name: string): Promise<CycleNodeRequestObject | undefined> {
    const { group, version, plural } = CYCLE_NODE_REQUEST;
    try {
      return (await this.custom.getNamespacedCustomObject({ group, version, plural, namespace, name })) as CycleNodeRequestObject;
    } catch (err) {
      if (apiStatus(err) === 404) return undefined;
      throw err;
    }
  }

  /** Sets metadata.finalizers, failing with 409 if the object changed since `obj` was read. */
  async setFinalizers(obj: CycleNodeRequestObject, finalizers: string[]): Promise<CycleNodeRequestObject> {
    const { group, version, plural } = CYCLE_NODE_REQUEST;
    const body = { metadata: { finalizers, resourceVersion: obj.metadata.resourceVersion } };
    return (await this.custom.patchNamespacedCustomObject(
      { group, version, plural, namespace: obj.metadata.namespace, name: obj.metadata.name, body },
      mergePatch,
    )) as CycleNodeRequestObject;
  }

  /** Merge patch of the status subresource. */
  async patchRequestStatus(obj: CycleNodeRequestObject, status: Record<string, unknown>): Promise<CycleNodeRequestObject> {
    const { group, version, plural } = CYCLE_NODE_REQUEST;
    return (await this.custom.patchNamespacedCustomObjectStatus(
      { group, version, plural, namespace: obj.metadata.namespace, name: obj.metadata.name, body: { status } },
      mergePatch,
    )) as CycleNodeRequestObject;
  }

  /** Creates a CycleNodeStatus (spec and metadata; the status subresource ignores status on create). */
  async createNodeStatus(body: CycleNodeStatusObject): Promise<CycleNodeStatusObject | undefined> {
    const { group, version, plural } = CYCLE_NODE_STATUS;
    try {
      return (await this.custom.createNamespacedCustomObject({ group, version, plural, namespace: body.metadata.namespace, body })) as CycleNodeStatusObject;
    } catch (err) {
      if (apiStatus(err) === 409) return undefined; // created already (the watch has not shown it yet)
      throw err;
    }
  }

  async patchNodeStatus(namespace: string, name: string, status: Record<string, unknown>): Promise<CycleNodeStatusObject> {
    const { group, version, plural } = CYCLE_NODE_STATUS;
    return (await this.custom.patchNamespacedCustomObjectStatus({ group, version, plural, namespace, name, body: { status } }, mergePatch)) as CycleNodeStatusObject;
  }
}

/** The controller ownerReference of a CycleNodeStatus to its request (garbage collection deletes it with the request). */
export function ownerReference(req: CycleNodeRequestObject) {
  return { apiVersion: API_VERSION, kind: CYCLE_NODE_REQUEST.kind, name: req.metadata.name, uid: req.metadata.uid, controller: true };
}

