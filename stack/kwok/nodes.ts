// Fake nodes for the local stack: Node objects that kwok (watching the kwok.x-k8s.io/node
// annotation) animates as if a kubelet ran them. Usage:
//   node dist/stack/kwok/nodes.js --group workers --count 6 [--zone us-east-1a] [--instance-type m5.large]
import type { CoreV1Api } from '@kubernetes/client-node';
import { createKube } from '../../kube/client.js';
import { ensureNode, fakeNode, type FakeNodeSpec } from '../../activities/providers/kwok-node.js';
import { GROUP_TEMPLATE_HASH_ANNOTATION } from '../../api/node-group-kind.js';
import { flag } from '../args.js';
import { mergePatch } from '../../kube/patch.js';
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';

/** Creates `<group>-0 .. <group>-(count-1)` and waits until kwok reports them Ready. */
export async function ensureFakeNodeGroup(
  core: CoreV1Api,
  group: string,
  count: number,
  opts: Omit<FakeNodeSpec, 'name' | 'nodeGroup'> = {},
  timeoutMs = 60_000,
): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) => `${group}-${i}`);
  await Promise.all(names.map((name) => ensureNode(core, fakeNode({ ...opts, name, nodeGroup: group }))));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = await core.listNode({ labelSelector: `${NODE_GROUP_LABEL}=${group}` });
    const ready = new Set(
      list.items
        .filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
        .map((n) => n.metadata!.name!),
    );
    if (names.every((n) => ready.has(n))) return names;
    if (Date.now() > deadline) throw new Error(`fake nodes of group ${group} not Ready after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/**
 * Sets a kwok group's launch template (its template hash; null removes it) on every member, as an
 * Auto Scaling group's new launch template version: replacements are launched with it, and members
 * launched with another have drifted (the kwok provider's driftedInstances).
 */
export async function setKwokTemplateHash(core: CoreV1Api, group: string, hash: string | null): Promise<void> {
  const members = (await core.listNode({ labelSelector: `${NODE_GROUP_LABEL}=${group}` })).items;
  for (const n of members) {
    await core.patchNode({ name: n.metadata!.name!, body: { metadata: { annotations: { [GROUP_TEMPLATE_HASH_ANNOTATION]: hash } } } }, mergePatch);
  }
}

/** Deletes the nodes of every node group `match` selects; returns how many. */
export async function deleteNodeGroups(core: CoreV1Api, match: (group: string) => boolean): Promise<number> {
  const nodes = (await core.listNode({ labelSelector: NODE_GROUP_LABEL })).items;
  const doomed = nodes.filter((n) => match(n.metadata!.labels![NODE_GROUP_LABEL]!));
  await Promise.all(doomed.map((n) => core.deleteNode({ name: n.metadata!.name! }).catch(() => undefined)));
  return doomed.length;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const prefixes = flag(args, 'delete-groups-prefixed');
  if (prefixes !== undefined) {
    const wanted = prefixes.split(',').filter(Boolean);
    const n = await deleteNodeGroups(createKube().core, (g) => wanted.some((p) => g.startsWith(p)));
    console.log(`deleted ${n} nodes of node groups prefixed ${prefixes}`);
    process.exit(0);
  }
  const group = flag(args, 'group') ?? 'workers';
  const count = Number(flag(args, 'count') ?? 3);
  const names = await ensureFakeNodeGroup(createKube().core, group, count, {
    zone: flag(args, 'zone'),
    instanceType: flag(args, 'instance-type'),
  });
  console.log(`node group ${group}: ${names.join(', ')} Ready`);
}
