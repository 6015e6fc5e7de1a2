// The local default provider: a node group is the label slipway.dev/node-group on fake kwok Nodes.
// Stateless on purpose: the group's desired size is its member count, and a detached Node keeps an
// annotation naming its group (DETACHED_FROM_GROUP, the cycle's detach record too), which is also
// the record that an emptied group still exists.
import { createHash } from 'node:crypto';
import type { V1Node } from '@kubernetes/client-node';
import { CLEAR_DETACHED_FROM_GROUP, DETACHED_FROM_GROUP, detachedFromGroup } from '../../api/node-groups.js';
import { apiStatus, type Kube } from '../../kube/client.js';
import { GROUP_TEMPLATE_HASH_ANNOTATION, TEMPLATE_HASH_LABEL } from '../../api/node-group-kind.js';
import { ensureNode, fakeNode } from './kwok-node.js';
import { UnknownNodeGroupError, type GroupInstance, type NodeGroupDescription, type NodeGroupProvider } from './types.js';
import { mergePatch } from '../../kube/patch.js';
import { listAllPages } from '../../kube/listwatch.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

const ZONE_LABEL = 'topology.kubernetes.io/zone';

const INSTANCE_TYPE_LABEL = 'node.kubernetes.io/instance-type';

function namedError(name: string, message: string): Error {
  const err = new Error(message);
  err.name = name;
  return err;
}

/** `kwok://<node>` → `<node>`; anything else is a caller bug, so a permanent error. */
export function nodeNameFromKwokProviderID(providerID: string): string {
  const m = /^kwok:\/\/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)$/.exec(providerID);
  if (!m) throw namedError('InvalidProviderIDError', `not a kwok providerID: ${providerID}`);
  return m[1]!;
}

/**
 * The replacement for a detached node: derived from the detached node's name and uid, so a retry
 * finds the same name (409) instead of launching a second one. Kept within 63 characters because
 * fakeNode() also uses the name as the kubernetes.io/hostname label value.
 */
export function replacementNodeName(group: string, detachedName: string, detachedUid: string): string {
  const hash = createHash('sha256').update(`${detachedName}/${detachedUid}`).digest('hex').slice(0, 8);
  const prefix = group.slice(0, 63 - 9).replace(/[^a-z0-9]+$/, '');
  return `${prefix}-${hash}`;
}

const isReady = (n: V1Node) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;

function lifecycleOf(n: V1Node): GroupInstance['lifecycle'] {
  if (n.metadata?.deletionTimestamp) return 'Terminating';
  return isReady(n) ? 'InService' : 'Pending';
}

export function createKwokProvider(kube: Kube): NodeGroupProvider {
  async function listAllNodes(): Promise<V1Node[]> {
    return (await listAllPages((page) => kube.core.listNode(page))).items;
  }

  async function readNode(name: string): Promise<V1Node | undefined> {
    try {
      return await kube.core.readNode({ name });
    } catch (err) {
      if (apiStatus(err) === 404) return undefined;
      throw err;
    }
  }

  /**
   * Launches (idempotently) the detached node's replacement, in the same zone and instance type, from
   * the group's template now: kwok has no group object, so each member carries the group's template
   * hash (GROUP_TEMPLATE_HASH_ANNOTATION) and the hash it was launched with (TEMPLATE_HASH_LABEL).
   */
  async function ensureReplacement(detached: V1Node, group: string): Promise<void> {
    const labels = detached.metadata?.labels ?? {};
    const name = replacementNodeName(group, detached.metadata!.name!, detached.metadata!.uid!);
    const hash = detached.metadata?.annotations?.[GROUP_TEMPLATE_HASH_ANNOTATION];
    const node = fakeNode({ name, nodeGroup: group, zone: labels[ZONE_LABEL], instanceType: labels[INSTANCE_TYPE_LABEL], labels: hash ? { [TEMPLATE_HASH_LABEL]: hash } : undefined });
    if (hash) node.metadata!.annotations = { ...node.metadata!.annotations, [GROUP_TEMPLATE_HASH_ANNOTATION]: hash };
    await ensureNode(kube.core, node);
  }

  return {
    name: 'kwok',

    async describeGroups(names) {
      const wanted = [...new Set(names)];
      if (wanted.length === 0) return [];
      // One list serves every group: members by label, and the detached annotation as proof of existence.
      const nodes = await listAllNodes();
      const out: NodeGroupDescription[] = [];
      const unknown: string[] = [];
      for (const group of wanted) {
        const members = nodes.filter((n) => n.metadata?.labels?.[NODE_GROUP_LABEL] === group);
        const known = members.length > 0 || nodes.some((n) => detachedFromGroup(n.metadata?.annotations) === group);
        if (!known) {
          unknown.push(group);
          continue;
        }
        const instances = members
          .map((n) => ({ providerID: n.spec?.providerID ?? `kwok://${n.metadata!.name!}`, group, lifecycle: lifecycleOf(n) }))
          .sort((a, b) => a.providerID.localeCompare(b.providerID));
        out.push({ name: group, instances, desiredCapacity: members.length });
      }
      if (unknown.length > 0) throw new UnknownNodeGroupError(unknown, 'kwok');
      return out;
    },

    async detachInstance(providerID, group) {
      const name = nodeNameFromKwokProviderID(providerID);
      const node = await readNode(name);
      // Gone entirely: not in the group any more, and there is nothing left to name a replacement after.
      if (!node) return { alreadyDetached: true };
      const label = node.metadata?.labels?.[NODE_GROUP_LABEL];
      const detachedFrom = detachedFromGroup(node.metadata?.annotations);
      if (label !== undefined && label !== group) {
        throw namedError('InstanceInOtherGroupError', `node ${name} is in node group ${label}, not ${group}`);
      }
      let alreadyDetached = true;
      if (label === group) {
        // Label and annotation in one patch: no state in between for a crash to leave behind.
        await kube.core.patchNode(
          { name, body: { metadata: { labels: { [NODE_GROUP_LABEL]: null }, annotations: { [DETACHED_FROM_GROUP]: group } } } },
          mergePatch,
        );
        alreadyDetached = false;
      } else if (detachedFrom !== group) {
        // In no group and never detached from this one: nothing of ours to replace.
        return { alreadyDetached: true };
      }
      // Also on a retry: a crash after the patch must still end with exactly one replacement.
      await ensureReplacement(node, group);
      return { alreadyDetached };
    },

    async attachInstance(providerID, group) {
      const name = nodeNameFromKwokProviderID(providerID);
      const node = await readNode(name);
      if (!node) throw namedError('InstanceNotFoundError', `node ${name} does not exist`);
      const label = node.metadata?.labels?.[NODE_GROUP_LABEL];
      if (label !== undefined && label !== group) {
        throw namedError('InstanceInOtherGroupError', `node ${name} is in node group ${label}, not ${group}`);
      }
      const annotated = detachedFromGroup(node.metadata?.annotations) !== undefined;
      if (label === group && !annotated) return { alreadyAttached: true };
      await kube.core.patchNode(
        { name, body: { metadata: { labels: { [NODE_GROUP_LABEL]: group }, annotations: CLEAR_DETACHED_FROM_GROUP } } },
        mergePatch,
      );
      return { alreadyAttached: label === group };
    },

    async terminateInstance(providerID) {
      const name = nodeNameFromKwokProviderID(providerID);
      try {
        await kube.core.deleteNode({ name });
        return { alreadyGone: false };
      } catch (err) {
        if (apiStatus(err) === 404) return { alreadyGone: true };
        throw err;
      }
    },

    async driftedInstances(group) {
      const members = (await kube.core.listNode({ labelSelector: `${NODE_GROUP_LABEL}=${group}` })).items;
      if (members.length === 0 && !(await listAllNodes()).some((n) => detachedFromGroup(n.metadata?.annotations) === group)) throw new UnknownNodeGroupError([group], 'kwok');
      // A member without the group's hash: the group has no template (as far as it knows), so no drift.
      return members
        .filter((n) => !n.metadata?.deletionTimestamp)
        .flatMap((n) => {
          const want = n.metadata?.annotations?.[GROUP_TEMPLATE_HASH_ANNOTATION];
          const own = n.metadata?.labels?.[TEMPLATE_HASH_LABEL];
          return want !== undefined && own !== want ? [{ providerID: n.spec?.providerID ?? `kwok://${n.metadata!.name!}`, reason: `template-hash ${own ?? '(none)'}, the group's ${want}` }] : [];
        })
        .sort((a, b) => a.providerID.localeCompare(b.providerID));
    },

    async instancesExist(providerIDs) {
      if (providerIDs.length === 0) return new Set();
      const live = new Set(
        (await listAllNodes()).filter((n) => !n.metadata?.deletionTimestamp).map((n) => n.spec?.providerID ?? `kwok://${n.metadata!.name!}`),
      );
      return new Set(providerIDs.filter((id) => live.has(id)));
    },
  };
}
