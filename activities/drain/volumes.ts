// The volume-detach wait after a drain (after Cluster API's shouldWaitForNodeVolumes): the node
// is done when no volume is attached to it except those of pods the drain skipped. Attached means
// listed in node.status.volumesAttached or in an attached VolumeAttachment for the node.
import { Context, heartbeat } from '@temporalio/activity';
import { StorageV1Api, type V1Node, type V1PersistentVolume, type V1VolumeAttachment } from '@kubernetes/client-node';
import { truncate } from '../../shared/drain.js';
import type { Kube } from '../../kube/client.js';
import { isUnreachable } from './node.js';
import { freshNode } from '../node-cache.js';
import { watchUntil } from '../../kube/watch.js';
import { failpoint } from '../../shared/failpoint.js';

export interface VolumeWaitInput {
  nodeName: string;
  /** ns/claim of the skipped pods' PVCs: never waited for. */
  ignoredClaims: string[];
  /** How long this call watches; the workflow calls again until its own volumeDetachTimeout. */
  windowMs: number;
  /** The message the workflow shows: what is attached changing from it ends the wait (the workflow then says so). */
  shown?: string;
}

export interface VolumeWaitResult {
  detached: boolean;
  /** The node's kubelet is gone (Ready Unknown): nothing will unmount its volumes, so the drain stops waiting. */
  unreachable?: boolean;
  /** Why it is still waiting, or why it gave up. */
  message: string;
  attachedClaims: string[];
}

export interface AttachedVolumes {
  claims: string[];
  unclaimedPVs: string[];
  unknownNodeVolumes: string[];
  unknownAttachments: string[];
}

/** Pure: what is still attached, minus the ignored claims. */
export function attachedVolumes(node: V1Node | undefined, attachments: V1VolumeAttachment[], pvs: V1PersistentVolume[], ignored: Set<string>): AttachedVolumes {
  const fromNode = new Set((node?.status?.volumesAttached ?? []).map((v) => v.name));
  const fromVA = new Set(
    attachments.filter((a) => a.status?.attached && a.spec.nodeName === node?.metadata?.name).map((a) => a.spec.source.persistentVolumeName ?? `(inline) ${a.metadata?.name}`),
  );
  const claims = new Set<string>();
  const unclaimedPVs: string[] = [];
  const matchedNode = new Set<string>();
  const matchedVA = new Set<string>();
  for (const pv of pvs) {
    const csi = pv.spec?.csi ? `kubernetes.io/csi/${pv.spec.csi.driver}^${pv.spec.csi.volumeHandle}` : undefined;
    const viaNode = csi !== undefined && fromNode.has(csi);
    const viaVA = fromVA.has(pv.metadata!.name!);
    if (!viaNode && !viaVA) continue;
    if (viaNode) matchedNode.add(csi!);
    if (viaVA) matchedVA.add(pv.metadata!.name!);
    const ref = pv.spec?.claimRef;
    if (ref && (ref.kind ?? 'PersistentVolumeClaim') === 'PersistentVolumeClaim') claims.add(`${ref.namespace}/${ref.name}`);
    else unclaimedPVs.push(pv.metadata!.name!);
  }
  return {
    claims: [...claims].filter((c) => !ignored.has(c)).sort(),
    unclaimedPVs: unclaimedPVs.sort(),
    unknownNodeVolumes: [...fromNode].filter((v) => !matchedNode.has(v)).sort(),
    unknownAttachments: [...fromVA].filter((v) => !matchedVA.has(v)).sort(),
  };
}

export function volumesMessage(a: AttachedVolumes): string {
  const lines = ['Waiting for Node volumes to be detached'];
  if (a.claims.length) lines.push(`* PersistentVolumeClaims: ${truncate(a.claims, 5)}`);
  if (a.unclaimedPVs.length) lines.push(`* PersistentVolumes without a .spec.claimRef to a PersistentVolumeClaim: ${truncate(a.unclaimedPVs, 5)}`);
  if (a.unknownNodeVolumes.length) lines.push(`* Node with .status.volumesAttached entries not matching a PersistentVolume: ${truncate(a.unknownNodeVolumes, 5)}`);
  if (a.unknownAttachments.length) lines.push(`* VolumeAttachment with .spec.source.persistentVolumeName not matching a PersistentVolume: ${truncate(a.unknownAttachments, 5)}`);
  return lines.join('\n');
}

const isClear = (a: AttachedVolumes) => !a.claims.length && !a.unclaimedPVs.length && !a.unknownNodeVolumes.length && !a.unknownAttachments.length;

export function createVolumeActivities(kube: Kube) {
  const storage = kube.config.makeApiClient(StorageV1Api);
  return {
    async waitForVolumeDetach(input: VolumeWaitInput): Promise<VolumeWaitResult> {
      failpoint('worker.drain.volume-wait');
      const ignored = new Set(input.ignoredClaims);
      let node: V1Node | undefined;
      let pvs: V1PersistentVolume[] = [];
      let current = attachedVolumes(undefined, [], [], ignored);
      // Watch VolumeAttachments (the attach/detach controller's record); re-read the node on each
      // list. PersistentVolumes (every one in the cluster) are read only when something is attached.
      const { met } = await watchUntil<V1VolumeAttachment>({
        kc: kube.config,
        path: '/apis/storage.k8s.io/v1/volumeattachments',
        list: async () => {
          const [l, n] = await Promise.all([storage.listVolumeAttachment(), freshNode(kube, input.nodeName)]); // never a stale "detached"
          node = n;
          const anything = (node?.status?.volumesAttached?.length ?? 0) > 0 || l.items.some((a) => a.spec.nodeName === input.nodeName && a.status?.attached);
          pvs = anything ? (await kube.core.listPersistentVolume()).items : [];
          return { items: l.items, resourceVersion: l.metadata?.resourceVersion ?? '' };
        },
        done: (vas) => {
          current = attachedVolumes(node, [...vas.values()], pvs, ignored);
          return node === undefined || isUnreachable(node) || isClear(current) || (input.shown !== undefined && volumesMessage(current) !== input.shown);
        },
        timeoutMs: input.windowMs,
        onTick: () => heartbeat({ claims: current.claims }),
        signal: Context.current().cancellationSignal,
      });
      if (met && node === undefined) return { detached: true, message: 'Node is gone', attachedClaims: [] };
      if (met && isUnreachable(node) && !isClear(current)) return { detached: false, unreachable: true, message: volumesMessage(current), attachedClaims: current.claims };
      if (met && isClear(current)) {
        failpoint('worker.drain.after-volume-wait');
        return { detached: true, message: 'volumes detached', attachedClaims: [] };
      }
      return { detached: false, message: volumesMessage(current), attachedClaims: current.claims };
    },
  };
}
