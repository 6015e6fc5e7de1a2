// WaitCompleted pods and the volume-detach wait, on the local stack.
import { StorageV1Api } from '@kubernetes/client-node';
import { drainStatusQuery } from '../../workflows/messages.js';
import { DrainFixture, evictionsOf, removalsOf, slipwayDeletionsOf } from '../support/drain.js';
import { mergePatch } from '../../kube/patch.js';
import { waitFor } from '../support/wait.js';

describe('WaitCompleted', () => {
  const f = new DrainFixture('it-wait');
  beforeAll(() => f.setup());
  afterAll(() => f.teardown());

  test("waits for a Job's pod to finish, never evicts it, and removes it once finished", async () => {
    await f.waitCompletedJob('backup', '5s');
    await f.deploy('web', 1);
    const [jobPod] = await f.waitRunning(1, 'app=backup');
    await f.waitRunning(2);
    await f.addSpare();
    const handle = await f.startDrain();
    const waiting = await waitFor('the job pod listed as waiting', async () => {
      const s = await handle.query(drainStatusQuery);
      return s.wave?.waitingCompletion.length ? s : undefined;
    });
    expect(waiting.wave!.waitingCompletion).toEqual([`${f.ns}/${jobPod!.metadata!.name}`]);

    const result = await handle.result();
    expect(result.status.phase).toBe('Drained');
    const audit = await f.audit();
    const jobName = jobPod!.metadata!.name!;
    expect(evictionsOf(audit).map((e) => e.objectRef!.name)).not.toContain(jobName);
    expect(evictionsOf(audit).filter((e) => e.objectRef!.name!.startsWith('web-'))).toHaveLength(1);
    // It ran to completion (kwok completes it 5 s after it started), and only then was deleted.
    const deletion = slipwayDeletionsOf(audit).find((e) => e.objectRef!.name === jobName)!;
    expect(deletion).toBeDefined();
    const startedAt = new Date(jobPod!.status!.startTime!).getTime();
    expect(new Date(deletion.requestReceivedTimestamp).getTime() - startedAt).toBeGreaterThanOrEqual(4000);
  });
});

/** A fixture with helpers for PVs, claims and VolumeAttachments (each test drains its own node). */
function volumeFixture(prefix: string) {
  const f = new DrainFixture(prefix);
  const storage = f.c.config.makeApiClient(StorageV1Api);
  const made: string[] = [];
  /** A pre-bound hostPath PV and its claim (not attachable, so the attach/detach controller leaves our VolumeAttachments alone). */
  async function claim(name: string) {
    const pv = `${f.ns}-${name}`;
    made.push(pv);
    await f.c.core.createPersistentVolume({
      body: {
        metadata: { name: pv },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          hostPath: { path: `/tmp/${pv}` },
          storageClassName: '',
          claimRef: { namespace: f.ns, name },
        },
      },
    });
    await f.c.core.createNamespacedPersistentVolumeClaim({
      namespace: f.ns,
      body: { metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], storageClassName: '', volumeName: pv, resources: { requests: { storage: '1Gi' } } } },
    });
    // Pods of an unbound claim are parked by the scheduler; create them once it is Bound.
    await waitFor(`claim ${name} Bound`, async () => (await f.c.core.readNamespacedPersistentVolumeClaim({ name, namespace: f.ns })).status?.phase === 'Bound');
    return pv;
  }

  async function attach(pv: string) {
    await storage.createVolumeAttachment({
      body: { metadata: { name: pv }, spec: { attacher: 'fake.csi.slipway.dev', nodeName: f.node, source: { persistentVolumeName: pv } } },
    });
    await storage.patchVolumeAttachmentStatus({ name: pv, body: { status: { attached: true } } }, mergePatch);
  }

  async function podWithClaim(name: string, claimName: string, labels: Record<string, string> = {}) {
    const t = f.podTemplate({ app: name, ...labels });
    await f.c.apps.createNamespacedDeployment({
      namespace: f.ns,
      body: {
        metadata: { name },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: name } },
          template: { ...t, spec: { ...t.spec, volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }] } },
        },
      },
    });
  }

  const cleanup = async () => {
    for (const name of made) {
      await storage.deleteVolumeAttachment({ name }).catch(() => undefined);
      await f.c.core.deletePersistentVolume({ name }).catch(() => undefined);
    }
    await f.teardown();
  };
  return { f, storage, claim, attach, podWithClaim, cleanup };
}

describe('waiting for volumes to detach', () => {
  const v = volumeFixture('it-vol');
  const { f, storage, claim, attach, podWithClaim } = v;
  beforeAll(() => f.setup());
  afterAll(() => v.cleanup());

  test("waits for a drained pod's volume, but not for a skipped pod's, and reports the claim", async () => {
    const keptPV = await claim('kept');
    const movedPV = await claim('moved');
    await podWithClaim('keeper', 'kept', { 'slipway.dev/drain': 'skip' });
    await podWithClaim('mover', 'moved');
    await f.waitRunning(2);
    await attach(keptPV);
    await attach(movedPV);

    const handle = await f.startDrain();
    const waiting = await waitFor('the volume wait', async () => {
      const s = await handle.query(drainStatusQuery);
      return s.phase === 'WaitingForVolumeDetach' && s.volumes ? s : undefined;
    });
    expect(waiting.volumes!.message).toContain(`PersistentVolumeClaims: ${f.ns}/moved`);
    expect(waiting.volumes!.message).not.toContain(`${f.ns}/kept`);

    // The attach/detach controller's part: detach the moved pod's volume.
    await storage.deleteVolumeAttachment({ name: movedPV });
    const result = await handle.result();
    expect(result.status.phase).toBe('Drained');
    expect(result.status.volumes).toEqual({ message: 'volumes detached', timedOut: false });
    // The skipped pod and its attachment stay.
    expect((await storage.readVolumeAttachment({ name: keptPV })).status?.attached).toBe(true);
    expect((await f.pods('app=keeper')).map((p) => p.spec?.nodeName)).toEqual([f.node]);
  });

});

describe('volumeDetachTimeout', () => {
  const v = volumeFixture('it-voltimeout');
  const { f, claim, attach, podWithClaim } = v;
  beforeAll(() => f.setup());
  afterAll(() => v.cleanup());

  test('gives up after volumeDetachTimeout and reports it', async () => {
    const pv = await claim('stuck');
    await podWithClaim('stuck', 'stuck');
    const [pod] = await f.waitRunning(1, 'app=stuck');
    await attach(pv);
    const started = Date.now();
    const result = await (await f.startDrain({ volumeDetachTimeout: '2s' })).result();
    expect(result.status.phase).toBe('Drained');
    expect(result.status.volumes?.timedOut).toBe(true);
    expect(result.status.volumes?.message).toContain(`${f.ns}/stuck`);
    expect(result.status.volumes?.message).toContain('volumeDetachTimeout reached');
    expect(removalsOf(await f.audit()).map((e) => e.objectRef!.name)).toContain(pod!.metadata!.name);
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
  });
});
