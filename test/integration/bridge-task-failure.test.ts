// A workflow task that keeps failing (a bug, or an input that throws in workflow code) leaves the
// workflow Running while Temporal retries the task for ever. The bridge notices, in the request's
// own workflow and in its children, and says so in status (Ready=False WorkflowTaskFailing, with
// the error) and in one Warning Event. On the local stack with a scripted cycle workflow whose
// signal `scriptBreak` makes a workflow task throw.
import { writeFileSync } from 'node:fs';
import type { CycleNodeRequestObject } from '../../starter/bridge/cycle/objects.js';
import { nodeCycleWorkflowId, type CycleStatus } from '../../workflows/cycle/types.js';
import { BridgeFixture, validSpec } from '../support/bridge.js';
import { uniqueName } from '../support/cluster.js';
import { waitFor } from '../support/wait.js';

const f = new BridgeFixture('it-bridge-wft');
const GROUP = 'it-bridge-group';
const cond = (o: CycleNodeRequestObject, type: string) => o.status?.conditions?.find((c) => c.type === type);

beforeAll(async () => {
  await f.setup();
  await f.scriptedWorker();
});
afterEach(() => f.stopBridges());
afterAll(async () => {
  writeFileSync(`/tmp/${f.ns}.log`, f.dumpLogs());
  await f.teardown();
});

async function waitStatus(name: string, what: string, ok: (o: CycleNodeRequestObject) => boolean, timeoutMs = 30_000): Promise<CycleNodeRequestObject> {
  return waitFor(`${name}: ${what}`, async () => {
    const o = await f.getCnr(name);
    return o && ok(o) ? o : undefined;
  }, { timeoutMs, intervalMs: 100 });
}

const draining: CycleStatus = {
  phase: 'WaitingTermination',
  message: '1 nodes draining',
  nodes: [{ nodeName: 'n1', phase: 'Pending' }],
  nodesCycled: 0,
  nodesTotal: 1,
};

async function attempts(workflowId: string): Promise<number> {
  const d = await f.client.workflow.getHandle(workflowId).describe();
  return d.raw.pendingWorkflowTask?.attempt ?? 0;
}

test("a node child's failing workflow task: Ready=False WorkflowTaskFailing naming the child and the error, one Warning Event; it clears once the child is gone", async () => {
  await f.bridge({ taskCheckIntervalMs: 1000 });
  const name = uniqueName('cnr');
  await f.createCnr(name, validSpec(GROUP));
  const id = (await waitStatus(name, 'started', (o) => Boolean(o.status?.workflowId))).status!.workflowId!;
  const h = f.client.workflow.getHandle(id);
  await h.signal('scriptStatus', draining);
  await waitStatus(name, 'WaitingTermination', (o) => o.status?.phase === 'WaitingTermination');

  // The case: a node's workflow code throws RangeError: Invalid time value on every attempt.
  const child = nodeCycleWorkflowId(id, 'n1');
  f.track(child);
  await h.signal('scriptBreak', { where: 'child', node: 'n1', message: 'Invalid time value' });
  const failing = await waitStatus(name, 'Ready=False WorkflowTaskFailing', (o) => cond(o, 'Ready')?.reason === 'WorkflowTaskFailing');
  f.logs.push(`failing status: ${JSON.stringify(failing.status, null, 1)}`);
  expect(cond(failing, 'Ready')!.status).toBe('False');
  expect(cond(failing, 'Ready')!.message).toContain(child);
  expect(cond(failing, 'Ready')!.message).toContain('RangeError: Invalid time value');
  expect(failing.status!.message).toContain('RangeError: Invalid time value');
  expect(failing.status!.phase).toBe('WaitingTermination'); // the workflow still runs

  // Temporal retries the task; the Event is recorded once.
  await waitFor('3 attempts of the failing task', async () => (await attempts(child)) >= 3, { timeoutMs: 90_000, intervalMs: 1000 });
  const events = (await f.events(name)).filter((e) => e.reason === 'WorkflowTaskFailing');
  expect(events).toHaveLength(1);
  expect(events[0]).toMatchObject({ type: 'Warning', count: 1 });
  expect(events[0]!.message).toContain('RangeError: Invalid time value');

  // An operator ends the broken child: the request's status is the workflow's own again.
  await f.client.workflow.getHandle(child).terminate('test: fixed');
  const back = await waitStatus(name, 'Ready back to the phase', (o) => cond(o, 'Ready')?.reason === 'WaitingTermination');
  expect(back.status!.message).toBe('1 nodes draining');
}, 150_000);

test("the request's own failing workflow task shows the same way", async () => {
  await f.bridge({ taskCheckIntervalMs: 1000 });
  const name = uniqueName('cnr');
  await f.createCnr(name, validSpec(GROUP));
  const id = (await waitStatus(name, 'started', (o) => Boolean(o.status?.workflowId))).status!.workflowId!;
  const h = f.client.workflow.getHandle(id);
  await h.signal('scriptStatus', draining);
  await waitStatus(name, 'WaitingTermination', (o) => o.status?.phase === 'WaitingTermination');
  await h.signal('scriptBreak', { where: 'self', message: 'cannot read properties of undefined' });
  const failing = await waitStatus(name, 'Ready=False WorkflowTaskFailing', (o) => cond(o, 'Ready')?.reason === 'WorkflowTaskFailing');
  expect(cond(failing, 'Ready')!.message).toContain(id);
  expect(cond(failing, 'Ready')!.message).toContain('TypeError: cannot read properties of undefined');
  expect((await h.describe()).status.name).toBe('RUNNING');
  const events = await waitFor('WorkflowTaskFailing event', async () => {
    const e = (await f.events(name)).filter((x) => x.reason === 'WorkflowTaskFailing');
    return e.length > 0 && e;
  });
  expect(events).toHaveLength(1);
  expect(events[0]!.type).toBe('Warning');
}, 120_000);
