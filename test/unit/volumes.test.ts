import type { V1Node, V1PersistentVolume, V1VolumeAttachment } from '@kubernetes/client-node';
import { attachedVolumes, volumesMessage, type AttachedVolumes } from '../../activities/drain/volumes.js';

const DRIVER = 'ebs.csi.aws.com';

function node(name: string, attached: string[] = []): V1Node {
  return { metadata: { name }, status: { volumesAttached: attached.map((n) => ({ name: n, devicePath: '' })) } };
}

function csiPV(name: string, handle: string, claim?: string): V1PersistentVolume {
  const [namespace, claimName] = (claim ?? '/').split('/');
  return {
    metadata: { name },
    spec: {
      csi: { driver: DRIVER, volumeHandle: handle },
      ...(claim ? { claimRef: { kind: 'PersistentVolumeClaim', namespace, name: claimName } } : {}),
    },
  };
}

function va(name: string, nodeName: string, pv: string | undefined, attached = true): V1VolumeAttachment {
  return {
    metadata: { name },
    spec: { attacher: DRIVER, nodeName, source: pv === undefined ? { inlineVolumeSpec: {} } : { persistentVolumeName: pv } },
    status: { attached },
  };
}

const nodeVolume = (handle: string) => `kubernetes.io/csi/${DRIVER}^${handle}`;
const none = new Set<string>();

describe('attachedVolumes', () => {
  test("a CSI volume in node.status.volumesAttached maps to its PV's claim", () => {
    const a = attachedVolumes(node('n1', [nodeVolume('vol-1')]), [], [csiPV('pv-1', 'vol-1', 'db/data-0'), csiPV('pv-2', 'vol-2', 'db/data-1')], none);
    expect(a).toEqual({ claims: ['db/data-0'], unclaimedPVs: [], unknownNodeVolumes: [], unknownAttachments: [] });
  });

  test("an attached VolumeAttachment for the node maps to its PV's claim", () => {
    const a = attachedVolumes(node('n1'), [va('va-1', 'n1', 'pv-1')], [csiPV('pv-1', 'vol-1', 'db/data-0')], none);
    expect(a.claims).toEqual(['db/data-0']);
    expect(a.unknownAttachments).toEqual([]);
  });

  test('a volume seen both on the node and in a VolumeAttachment is one claim', () => {
    const a = attachedVolumes(node('n1', [nodeVolume('vol-1')]), [va('va-1', 'n1', 'pv-1')], [csiPV('pv-1', 'vol-1', 'db/data-0')], none);
    expect(a).toEqual({ claims: ['db/data-0'], unclaimedPVs: [], unknownNodeVolumes: [], unknownAttachments: [] });
  });

  test('a VolumeAttachment for another node, or not attached, is ignored', () => {
    const a = attachedVolumes(
      node('n1'),
      [va('va-other', 'n2', 'pv-1'), va('va-detached', 'n1', 'pv-2', false)],
      [csiPV('pv-1', 'vol-1', 'db/data-0'), csiPV('pv-2', 'vol-2', 'db/data-1')],
      none,
    );
    expect(a).toEqual({ claims: [], unclaimedPVs: [], unknownNodeVolumes: [], unknownAttachments: [] });
  });

  test('claims of skipped pods are not waited for', () => {
    const a = attachedVolumes(
      node('n1', [nodeVolume('vol-1'), nodeVolume('vol-2')]),
      [],
      [csiPV('pv-1', 'vol-1', 'kube-system/agent-state'), csiPV('pv-2', 'vol-2', 'db/data-0')],
      new Set(['kube-system/agent-state']),
    );
    expect(a.claims).toEqual(['db/data-0']);
    expect(a.unknownNodeVolumes).toEqual([]);
  });

  test('an attached PV without a claimRef is reported as unclaimed', () => {
    const a = attachedVolumes(node('n1', [nodeVolume('vol-1')]), [], [csiPV('pv-static', 'vol-1')], none);
    expect(a).toEqual({ claims: [], unclaimedPVs: ['pv-static'], unknownNodeVolumes: [], unknownAttachments: [] });
  });

  test('node volumes and VolumeAttachments that match no PV are reported', () => {
    const a = attachedVolumes(
      node('n1', [nodeVolume('vol-ghost'), 'kubernetes.io/aws-ebs/vol-legacy']),
      [va('va-1', 'n1', 'pv-gone'), va('va-inline', 'n1', undefined)],
      [csiPV('pv-1', 'vol-1', 'db/data-0')],
      none,
    );
    expect(a).toEqual({
      claims: [],
      unclaimedPVs: [],
      unknownNodeVolumes: ['kubernetes.io/aws-ebs/vol-legacy', nodeVolume('vol-ghost')],
      unknownAttachments: ['(inline) va-inline', 'pv-gone'],
    });
  });

  test('results are sorted', () => {
    const a = attachedVolumes(
      node('n1', [nodeVolume('v3'), nodeVolume('v1'), nodeVolume('v2')]),
      [],
      [csiPV('pv-3', 'v3', 'z/c'), csiPV('pv-1', 'v1', 'a/a'), csiPV('pv-2', 'v2', 'm/b')],
      none,
    );
    expect(a.claims).toEqual(['a/a', 'm/b', 'z/c']);
  });

  test('a node that is gone has nothing attached', () => {
    expect(attachedVolumes(undefined, [va('va-1', 'n1', 'pv-1')], [csiPV('pv-1', 'vol-1', 'db/data-0')], none)).toEqual({
      claims: [],
      unclaimedPVs: [],
      unknownNodeVolumes: [],
      unknownAttachments: [],
    });
  });
});

describe('volumesMessage', () => {
  test('lists each category that has entries', () => {
    const a: AttachedVolumes = { claims: ['db/data-0', 'db/data-1'], unclaimedPVs: ['pv-static'], unknownNodeVolumes: ['kubernetes.io/x'], unknownAttachments: ['pv-gone'] };
    expect(volumesMessage(a).split('\n')).toEqual([
      'Waiting for Node volumes to be detached',
      '* PersistentVolumeClaims: db/data-0, db/data-1',
      '* PersistentVolumes without a .spec.claimRef to a PersistentVolumeClaim: pv-static',
      '* Node with .status.volumesAttached entries not matching a PersistentVolume: kubernetes.io/x',
      '* VolumeAttachment with .spec.source.persistentVolumeName not matching a PersistentVolume: pv-gone',
    ]);
  });

  test('leaves out empty categories and truncates long lists after five', () => {
    const claims = ['a/1', 'a/2', 'a/3', 'a/4', 'a/5', 'a/6', 'a/7'];
    expect(volumesMessage({ claims, unclaimedPVs: [], unknownNodeVolumes: [], unknownAttachments: [] })).toBe(
      'Waiting for Node volumes to be detached\n* PersistentVolumeClaims: a/1, a/2, a/3, a/4, a/5, ... (2 more)',
    );
  });
});
