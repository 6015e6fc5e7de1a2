// The request workflow keeps its history bounded by continuing as new, carrying its state, its
// node-group lock and its node cycles (stub activities, a dev server of its own).
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { cycleEnv, withStubWorker } from '../support/cycle-env.js';
import { stubCluster, type StubCluster } from '../../bench/stub-activities.js';
import { nodeGroupLockWorkflow } from '../../workflows/cycle/lock.js';
import { cycleNodeRequestWorkflow, type CycleRequestRun } from '../../workflows/cycle/request.js';

let env: TestWorkflowEnvironment;
beforeAll(async () => {
  env = await cycleEnv();
}, 120_000);
afterAll(() => env?.teardown());

let seq = 0;
async function runRequest(cluster: StubCluster, opts: { concurrency?: number; historyBudget: number }) {
  const id = `cnr/test/req-${++seq}/uid`;
  const taskQueue = `cycle-history-${seq}`;
  const input: CycleRequestRun = {
    request: { namespace: 'test', name: `req-${seq}`, uid: 'uid' },
    spec: { nodeGroupName: cluster.nodes[0]!.nodeGroup, selector: { matchLabels: {} }, cycleSettings: { method: 'Drain', concurrency: opts.concurrency } },
    historyBudget: opts.historyBudget,
  };
  const outcome = await withStubWorker(env, taskQueue, cluster, async () => {
    const handle = await env.client.workflow.start(cycleNodeRequestWorkflow, { workflowId: id, taskQueue, args: [input] });
    try {
      return { firstRunId: handle.firstExecutionRunId, result: await handle.result(), error: undefined };
    } catch (error) {
      return { firstRunId: handle.firstExecutionRunId, result: undefined, error: error as Error };
    }
  });
  return { id, ...outcome, runs: await runsOf(env.client, id, outcome.firstRunId) };
}

/** Every run of a workflow ID, oldest first (following the continue-as-new chain), with its history length and how it closed. */
async function runsOf(client: Client, workflowId: string, firstRunId: string) {
  const runs: Array<{ events: number; last: string }> = [];
  for (let runId: string | undefined = firstRunId; runId; ) {
    const history: temporal.api.history.v1.IHistory = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    const events = history.events ?? [];
    const last = events.at(-1);
    runs.push({ events: events.length, last: Object.keys(last ?? {}).find((k) => k.endsWith('EventAttributes')) ?? '' });
    runId = last?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
  }
  return runs;
}

async function lockStatus(group: string) {
  return (await env.client.workflow.getHandle(`lock/kwok/${group}`).describe()).status.name;
}

test('continues as new under a small history budget, cycles every node exactly once, and releases its lock', async () => {
  const cluster = stubCluster(24, 'cas-batches');
  const { result, runs } = await runRequest(cluster, { concurrency: 4, historyBudget: 100 });
  expect(result?.phase).toBe('Successful');
  expect(result?.nodesCycled).toBe(24);
  expect(result?.nodes.every((n) => n.phase === 'Successful')).toBe(true);
  expect([...cluster.terminated.values()]).toEqual(Array(24).fill(1));
  expect(cluster.terminated.size).toBe(24);
  expect(runs.length).toBeGreaterThan(2);
  expect(runs.slice(0, -1).every((r) => r.last === 'workflowExecutionContinuedAsNewEventAttributes')).toBe(true);
  for (const r of runs) expect(r.events).toBeLessThan(100 + 400); // a chunk's overshoot at most
  expect(cluster.calls.get('releaseScaleDown')).toBeGreaterThan(0);
  expect(await lockStatus('cas-batches')).toBe('COMPLETED');
}, 180_000);

test('with every node in flight at once, the children started before a switch report to the next run', async () => {
  const cluster = stubCluster(40, 'cas-all');
  const { result, runs } = await runRequest(cluster, { historyBudget: 200 });
  expect(result?.phase).toBe('Successful');
  expect(result?.nodesCycled).toBe(40);
  expect(cluster.terminated.size).toBe(40);
  expect([...cluster.terminated.values()].every((n) => n === 1)).toBe(true);
  expect(runs.length).toBeGreaterThan(1);
  expect(await lockStatus('cas-all')).toBe('COMPLETED');
}, 180_000);

test('a node cycle failing after a switch fails the request, heals and uncordons the nodes in flight, and releases the lock', async () => {
  const cluster = stubCluster(12, 'cas-fail');
  cluster.failNode = 'cas-fail-00010';
  const started = Date.now();
  const { result, error, runs } = await runRequest(cluster, { concurrency: 2, historyBudget: 100 });
  // Healing heard every cancelled cycle's end, also one cancelled while its last report was in
  // flight to a run that had continued as new (it waited out its 2-minute stop limit before).
  expect(Date.now() - started).toBeLessThan(60_000);
  expect(result).toBeUndefined();
  expect(error).toBeDefined();
  expect(runs.length).toBeGreaterThan(1);
  expect(cluster.uncordoned).toContain('cas-fail-00010');
  expect(cluster.terminated.has('kwok://cas-fail-00010')).toBe(false);
  expect(cluster.calls.get('healNodes')).toBeGreaterThan(0);
  expect(await lockStatus('cas-fail')).toBe('COMPLETED');
}, 180_000);

test('a batch whose node names overflow a search attribute value still cycles (the server terminated it)', async () => {
  const cluster = stubCluster(60, 'a-node-group-with-a-rather-long-name-for-its-nodes');
  const { result } = await runRequest(cluster, { historyBudget: 8000 });
  expect(result?.phase).toBe('Successful');
  expect(result?.nodesCycled).toBe(60);
}, 180_000);

test('a node-group lock whose holder has closed ends itself at its next look', async () => {
  const cluster = stubCluster(1, 'lock-holder');
  await withStubWorker(env, 'lock-holder', cluster, async () => {
    const holder = await env.client.workflow.start(nodeGroupLockWorkflow, { workflowId: 'holder-stand-in', taskQueue: 'lock-holder', args: [{ provider: 'kwok', group: 'other' }] });
    const lock = await env.client.workflow.start(nodeGroupLockWorkflow, {
      workflowId: 'lock/kwok/lock-holder',
      taskQueue: 'lock-holder',
      args: [{ provider: 'kwok', group: 'lock-holder', holder: holder.workflowId, probeEveryMs: 500 }],
    });
    await new Promise((r) => setTimeout(r, 2000));
    expect((await lock.describe()).status.name).toBe('RUNNING'); // its holder runs: held
    await holder.terminate('the holder is gone');
    await lock.result();
    expect((await lock.describe()).status.name).toBe('COMPLETED');
  });
}, 60_000);
