// Bad NodeMaintenances, aimed at the guard's nodes with a real bridge (NodeMaintenances included)
// and worker running: refused at admission naming the field, or accepted and reported in status
// and a Warning Event, refused by setStage in one line; after each, nothing was disrupted.
import { setTimeout as sleep } from 'node:timers/promises';
import { installCrds } from '../../starter/install-crds.js';
import type { NodeMaintenanceObject } from '../../starter/bridge/maintenance/objects.js';
import { admissionClient, causeFor, withSpecUnchecked, type Admission } from '../support/admission.js';
import { BAD_NODE_MAINTENANCES, NO_NODE, ROLLOUT } from '../support/bad-node-maintenances.js';
import { Maintenances } from '../support/bridge-maintenance.js';
import { cli, expectOneLineError } from '../support/cli.js';
import { uniqueName } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';
import { Guard } from './guard.js';
import { ALLOW_ALL_NODES_ANNOTATION } from '../../api/names.js';

const g = new Guard('bi-nm');
const nm = new Maintenances(g.f);
const admit = admissionClient(g.f.c.config);
const env = () => ({ SLIPWAY_TASK_QUEUE: g.f.taskQueue });

beforeAll(async () => {
  await installCrds(g.f.c.config);
  await g.setup();
  await g.f.bridge({ maintenances: true });
}, 120_000);
afterAll(async () => {
  await nm.cleanup();
  await g.teardown();
});

const guardNodes = () => ({ nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: g.nodes }] }] });
/** The corpus spec aimed at the guard's nodes, at stage Drain unless the case is about the stage. */
const aimed = (spec: unknown): unknown => {
  const s = JSON.parse(JSON.stringify(spec).replaceAll('"it-adm-no-such-node"', g.nodes.map((n) => JSON.stringify(n)).join(','))) as Record<string, unknown>;
  return 'stage' in s ? s : { ...s, stage: 'Drain' };
};
const said = (a: Admission) => a.causes.map((c) => `${c.field}: ${c.message}`);
/** The stage the workflow reached (status.stageStatuses' last entry). */
const reached = (o: NodeMaintenanceObject | undefined) => o?.status?.stageStatuses?.at(-1)?.name;
const condition = (o: NodeMaintenanceObject | undefined, type: string) => o?.status?.conditions?.find((c) => c.type === type);

async function warned(name: string, reason: string, words: string): Promise<void> {
  await waitFor(`${reason} Event on ${name}`, async () =>
    (await nm.events(name)).some((e) => e.type === 'Warning' && e.reason === reason && (e.message ?? '').includes(words)),
  { timeoutMs: 30_000 });
}

/** A maintenance selecting no node, moved to `stage` and running: for the steering cases. */
async function harmless(stage: string): Promise<string> {
  const name = uniqueName('bi-nm');
  await nm.create(name, { nodeSelector: NO_NODE, stage });
  await waitFor(`${name} at ${stage}`, async () => reached(await nm.get(name)) === stage, { timeoutMs: 30_000 });
  return name;
}

describe('refused at admission, naming the field', () => {
  test.each(BAD_NODE_MAINTENANCES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const m = await g.mark();
    const name = uniqueName('bi-nm');
    const a = await admit.nodeMaintenance(name, aimed(c.spec), { store: true });
    expect(a.code).toBe(422);
    expect([causeFor(a, c), said(a)]).toEqual([expect.anything(), said(a)]);
    expect(await nm.get(name)).toBeUndefined();
    await g.untouched(m);
  });
});

describe('accepted, then reported; or refused when steered', () => {
  test('NM-4.8 a selector that takes every node, at stage Drain: SelectsAllNodes, a Warning Event, no node cordoned', async () => {
    const m = await g.mark();
    const name = uniqueName('bi-nm-all');
    await nm.create(name, { nodeSelector: { nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['none'] }] }] }, stage: 'Drain' });
    const o = await waitFor(`${name} SelectsAllNodes`, async () => {
      const x = await nm.get(name);
      return condition(x, 'SelectsAllNodes')?.status === 'True' ? x : undefined;
    }, { timeoutMs: 30_000 });
    expect(condition(o, 'SelectsAllNodes')!.message).toContain(ALLOW_ALL_NODES_ANNOTATION);
    await warned(name, 'SelectsAllNodes', ALLOW_ALL_NODES_ANNOTATION);
    await sleep(2000); // time enough for a cordon that should not come
    await g.untouched(m);
    await nm.delete(name);
  });

  test('#28 a maintenance selecting more nodes than one may hold (SLIPWAY_MAINTENANCE_MAX_NODES lowered on the worker), at stage Drain: TooManyNodes, a Warning Event naming the count and the limit, nothing cordoned, no finalizer', async () => {
    const limit = g.nodes.length - 1;
    const before = process.env.SLIPWAY_MAINTENANCE_MAX_NODES;
    process.env.SLIPWAY_MAINTENANCE_MAX_NODES = String(limit); // the in-process worker's selection activities read it on each call
    try {
      const m = await g.mark();
      const name = uniqueName('bi-nm-many');
      await nm.create(name, { nodeSelector: guardNodes(), stage: 'Drain' });
      const o = await waitFor(`${name} TooManyNodes`, async () => {
        const x = await nm.get(name);
        return condition(x, 'Ready')?.reason === 'TooManyNodes' ? x : undefined;
      }, { timeoutMs: 30_000 });
      const said = `selects ${g.nodes.length} nodes, more than the ${limit} one NodeMaintenance may hold (SLIPWAY_MAINTENANCE_MAX_NODES on the worker): refused, nothing cordoned and no budget slot taken; split it`;
      expect(condition(o, 'Ready')).toMatchObject({ status: 'False', message: expect.stringContaining(said) });
      expect(o.status!.message).toContain(said);
      await warned(name, 'TooManyNodes', said);
      await sleep(2000); // time enough for a cordon that should not come
      expect((await nm.get(name))!.metadata.finalizers ?? []).toEqual([]);
      await g.untouched(m);
      await nm.delete(name);
    } finally {
      if (before === undefined) delete process.env.SLIPWAY_MAINTENANCE_MAX_NODES;
      else process.env.SLIPWAY_MAINTENANCE_MAX_NODES = before;
    }
  });

  test('NM-4.7 a maintenance stored before admission checked it (an upgrade), aimed at the guard at stage Drain: InvalidSpec, no workflow, no finalizer', async () => {
    const m = await g.mark();
    const name = uniqueName('bi-nm-stored');
    await withSpecUnchecked(g.f.c.config, 'NodeMaintenance', () =>
      nm.create(name, { nodeSelector: guardNodes(), stage: 'Drain', drainPlan: [{ podType: 'Default', podPriority: 5 }, { podType: 'Default', podPriority: 1 }] }),
    );
    const o = await waitFor(`${name} InvalidSpec`, async () => {
      const x = await nm.get(name);
      return condition(x, 'Ready')?.reason === 'InvalidSpec' ? x : undefined;
    }, { timeoutMs: 30_000 });
    expect(condition(o, 'Ready')!.message).toContain('spec.drainPlan');
    expect(o.status!.workflowId).toBeUndefined();
    expect(o.metadata.finalizers ?? []).toEqual([]);
    await warned(name, 'InvalidSpec', 'spec.drainPlan');
    await g.untouched(m);
    await nm.delete(name);
  }, 120_000);

  test('NM-4.6 widening the selector of a maintenance past Idle onto the guard is refused, naming the field', async () => {
    const name = await harmless('Cordon');
    const m = await g.mark();
    const a = await admit.patchNodeMaintenance(name, { spec: { nodeSelector: guardNodes() } });
    expect(a.code).toBe(422);
    expect(said(a).join('\n')).toContain('spec.nodeSelector');
    await sleep(1000);
    await g.untouched(m);
  });

  test('NM-2.1 spec.stage going back is refused at admission, naming the field', async () => {
    const name = await harmless('Cordon');
    const m = await g.mark();
    const a = await admit.patchNodeMaintenance(name, { spec: { stage: 'Idle' } });
    expect(a.code).toBe(422);
    expect(said(a).join('\n')).toContain('spec.stage');
    expect(((await nm.get(name))!.spec as { stage?: string }).stage).toBe('Cordon');
    await g.untouched(m);
  });

  test('#27.1 spec.rollout added after Idle is refused at admission, naming the field', async () => {
    const name = await harmless('Cordon');
    const m = await g.mark();
    const a = await admit.patchNodeMaintenance(name, { spec: { rollout: ROLLOUT } });
    expect([a.code, said(a).join('\n')]).toEqual([422, expect.stringMatching(/^spec\.rollout: .*spec\.rollout cannot change once the maintenance has left Idle/)]);
    expect((await nm.get(name))!.spec).not.toHaveProperty('rollout');
    await g.untouched(m);
  });

  test('#27.1 spec.rollout changed after Idle is refused at admission, naming the field', async () => {
    const name = uniqueName('bi-nm');
    await nm.create(name, { nodeSelector: NO_NODE, stage: 'Drain', rollout: ROLLOUT });
    await waitFor(`${name} at Drain`, async () => reached(await nm.get(name)) === 'Drain', { timeoutMs: 30_000 });
    const m = await g.mark();
    for (const rollout of [{ ...ROLLOUT, maxUnavailable: '50%' }, null]) {
      const a = await admit.patchNodeMaintenance(name, { spec: { rollout } });
      expect([rollout, a.code, said(a).join('\n')]).toEqual([rollout, 422, expect.stringMatching(/^spec\.rollout: .*spec\.rollout cannot change once the maintenance has left Idle/)]);
    }
    expect(((await nm.get(name))!.spec as { rollout?: unknown }).rollout).toMatchObject(ROLLOUT);
    await g.untouched(m);
  });

  test('setStage to a lower stage from the CLI: one line, exit 1, the stage stays', async () => {
    const name = await harmless('Cordon');
    const m = await g.mark();
    expectOneLineError(await cli(['maintenance', name, 'stage', 'Idle'], env()), 'cannot go back from Cordon to Idle');
    expect(reached(await nm.get(name))).toBe('Cordon');
    await g.untouched(m);
  });

  test('setStage to an unknown stage from the CLI: refused before anything is sent', async () => {
    const name = await harmless('Idle');
    const m = await g.mark();
    const r = await cli(['maintenance', name, 'stage', 'Drian'], env());
    expect(r.code).toBeGreaterThan(0);
    expect(r.stderr).toContain('Drian');
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(reached(await nm.get(name))).toBe('Idle');
    await g.untouched(m);
  });

  test('#27.2 done for a node that is not in the maintenance, from the CLI: one line, exit 1, nothing touched', async () => {
    const name = await harmless('Drain');
    const m = await g.mark();
    const r = await cli(['maintenance', name, 'done', g.nodes[0]!], env());
    expectOneLineError(r, `done ${g.nodes[0]!} refused by`);
    expect(reached(await nm.get(name))).toBe('Drain');
    await g.untouched(m);
  });

  test('#27.2 pause on a completed maintenance, from the CLI: one line, exit 1', async () => {
    const name = await harmless('Complete');
    const m = await g.mark();
    const r = await cli(['maintenance', name, 'pause'], env());
    expectOneLineError(r);
    expect(r.stderr).toMatch(/pause refused by|has ended/);
    await g.untouched(m);
  });

  test('setStage on a completed maintenance from the CLI: one line, exit 1', async () => {
    const name = await harmless('Complete');
    const m = await g.mark();
    const r = await cli(['maintenance', name, 'stage', 'Drain'], env());
    expectOneLineError(r);
    expect(r.stderr).toMatch(/Complete|completed/);
    expect(reached(await nm.get(name))).toBe('Complete');
    await g.untouched(m);
  });
});
