// One CycleNodeRequest over a stub fleet, measured: the payload-size recorder on its worker, the
// largest history, the largest status the bridge would write for it, this process's RSS peak
// (worker + client) and its CPU. A run of its own Temporal dev server (the stack's CLI, in memory),
// torn down after, so sizes do not share one. Used by bench/scale.ts and the workflow test
// test/workflow/scale-payloads.test.ts.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Client, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker } from '@temporalio/worker';
import { ALL_SEARCH_ATTRIBUTES } from '../workflows/search-attributes.js';
import { cycleNodeRequestWorkflow } from '../workflows/cycle/request.js';
import { cycleStatusQuery } from '../workflows/messages.js';
import type { CycleStatus } from '../workflows/cycle/types.js';
import type { CycleNodeRequestStatus } from '../api/cycle-node-request.js';
// The bridge's pure mapping of a request and its workflow's state to the status it writes. The
// bridge's cycle kind (starter/bridge/cycle/).
import { desired } from '../starter/bridge/cycle/desired.js';
import { CYCLE_FINALIZER } from '../api/cycle-node-request.js';
import { API_VERSION } from '../api/names.js';
import { cycleWorkflowId } from '../workflows/ids.js';
import type { CycleNodeRequestObject } from '../starter/bridge/cycle/objects.js';
import { workerTuning } from '../worker/config.js';
import { PayloadSizes, recordingBundle, type PayloadRecord } from './payload-sizes.js';
import { stubActivities, type StubCluster } from './stub-activities.js';

export interface ScaleRun {
  cluster: StubCluster;
  /** undefined: every node in flight at once. */
  concurrency?: number;
  /** The run is ended (its request terminated) after this long. */
  timeoutMs: number;
  /** How often the status is queried, as the bridge does after the workflow's tasks (the bridge throttles its queries). */
  queryEveryMs?: number;
  /** A reason to end the run at once (e.g. the first payload over a budget); undefined to go on. */
  stopOn?: (r: PayloadRecord) => string | undefined;
  /** Acts on the request while it runs (e.g. a spec-change update). */
  during?: (handle: WorkflowHandleWithFirstExecutionRunId<typeof cycleNodeRequestWorkflow>) => Promise<void>;
  /** Reads the server before it is torn down (e.g. the request's histories). */
  after?: (client: Client, handle: WorkflowHandleWithFirstExecutionRunId<typeof cycleNodeRequestWorkflow>) => Promise<void>;
  /** The workflows bundled with the recorder (recordingBundle) in a file; bundled here without one. */
  bundlePath?: string;
  /** History events before the request continues as new (the workflow's own default when undefined). */
  historyBudget?: number;
}

export interface ScaleFigures {
  nodes: number;
  /** How the run ended: the request's phase, or why it was stopped. */
  outcome: string;
  nodesCycled: number;
  payloads: PayloadSizes;
  largestHistory: { events: number; bytes: number; workflow: string; bytesWorkflow: string };
  /** The largest status the bridge would write (JSON bytes), and at how many nodes cycled. */
  largestStatusBytes: number;
  statusQueries: number;
  rssPeakMb: number;
  /** process.memoryUsage() when the RSS peaked: the V8 heap (used, total), external, array buffers; the rest is native (the SDK's core, its caches, code). */
  memoryAtPeak: NodeJS.MemoryUsage;
  /** RSS with the dev server up and the worker created, before the request starts (the fixed part). */
  rssStartMb: number;
  wallS: number;
  cpuS: number;
}

export function temporalBinary(): string {
  return process.env.SLIPWAY_TEMPORAL_BIN ?? join(process.env.SLIPWAY_HOME ?? join(homedir(), '.cache/slipway'), 'bin/temporal');
}

export async function runScale(o: ScaleRun): Promise<ScaleFigures> {
  const nodes = o.cluster.nodes.length;
  if (!existsSync(temporalBinary())) throw new Error(`no Temporal CLI at ${temporalBinary()}: run \`bash stack/stack.sh up\` once`);
  const env = await TestWorkflowEnvironment.createLocal({ server: { executable: { type: 'existing-path', path: temporalBinary() }, searchAttributes: ALL_SEARCH_ATTRIBUTES, log: { format: 'pretty', level: 'error' } } });
  const payloads = new PayloadSizes();
  let stop: (why: string) => void = () => undefined;
  const stopped = new Promise<string>((resolve) => (stop = resolve));
  if (o.stopOn) payloads.onRecord = (r) => { const why = o.stopOn!(r); if (why) stop(why); };
  const taskQueue = `scale-${nodes}`;
  const worker = await Worker.create({
    connection: env.nativeConnection,
    taskQueue,
    workflowBundle: o.bundlePath ? { codePath: o.bundlePath } : await recordingBundle(),
    activities: stubActivities(o.cluster),
    ...workerTuning(), // the production worker's sizing (worker/config.ts), its environment knobs included
    shutdownGraceTime: '5 seconds',
    ...payloads.workerOptions(),
  });
  const rssStart = process.memoryUsage.rss();
  let rssPeak = rssStart;
  let atPeak = process.memoryUsage();
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    if (m.rss > rssPeak) [rssPeak, atPeak] = [m.rss, m];
  }, 250);
  const cpu0 = process.cpuUsage();
  const started = Date.now();
  const request = { namespace: 'bench', name: `scale-${nodes}`, uid: `uid-${nodes}` };
  const workflowId = cycleWorkflowId(request);
  const spec = { nodeGroupName: o.cluster.nodes[0]?.nodeGroup ?? 'scale', selector: { matchLabels: {} }, cycleSettings: { method: 'Drain' as const, concurrency: o.concurrency } };
  const handle = await env.client.workflow.start(cycleNodeRequestWorkflow, { workflowId, taskQueue, args: [{ request, spec, historyBudget: o.historyBudget }] });

  // The bridge's view: the status query's answer mapped by desired() into the status it would write.
  const obj: CycleNodeRequestObject = { apiVersion: API_VERSION, kind: 'CycleNodeRequest', metadata: { ...request, generation: 1, finalizers: [CYCLE_FINALIZER] }, spec };
  let largestStatusBytes = 0;
  let statusQueries = 0;
  let lastState: CycleStatus | undefined;
  const bridgeStatus = (state: CycleStatus) => {
    lastState = state;
    const d = desired({ obj, workflow: { workflowId, runId: handle.firstExecutionRunId, generation: 1, state }, nodeStatus: () => undefined, now: new Date() });
    const status: CycleNodeRequestStatus | undefined = d.status?.next ?? obj.status;
    if (!status) return;
    obj.status = status;
    largestStatusBytes = Math.max(largestStatusBytes, Buffer.byteLength(JSON.stringify(status)));
  };
  let querying = true;
  const poller = (async () => {
    while (querying) {
      await new Promise((r) => setTimeout(r, o.queryEveryMs ?? 5_000));
      if (!querying) break;
      try {
        bridgeStatus(await handle.query(cycleStatusQuery));
        statusQueries++;
      } catch {
        // a query that fails (the workflow busy, closed, or over a limit) is asked again next time
      }
    }
  })();

  const timeout = new Promise<string>((r) => setTimeout(() => r(`stopped: time cap of ${(o.timeoutMs / 1000).toFixed(0)} s reached`), o.timeoutMs).unref());
  let outcome: string;
  try {
    outcome = await worker.runUntil(
      Promise.race([
        handle.result().then((s) => (bridgeStatus(s), `${s.phase}`), (e: Error) => `failed: ${e.message}`),
        stopped,
        timeout,
        ...(o.during ? [o.during(handle).then(() => new Promise<string>(() => undefined), (e: Error) => `stopped: what ran during the request failed: ${e.message}`)] : []),
      ]),
    );
  } catch (e) {
    outcome = `worker stopped: ${(e as Error).message}`;
  }
  const wallS = (Date.now() - started) / 1000;
  const cpu = process.cpuUsage(cpu0);
  querying = false;
  clearInterval(sampler);
  await poller;
  if (!/^(Successful|Failed)$/.test(outcome) && !outcome.startsWith('failed')) await handle.terminate(outcome).catch(() => undefined);

  // Every workflow's history (visibility lags a little behind the closes).
  await new Promise((r) => setTimeout(r, 2000));
  const largestHistory = { events: 0, bytes: 0, workflow: '', bytesWorkflow: '' };
  for await (const w of env.client.workflow.list()) {
    if (w.historyLength > largestHistory.events) Object.assign(largestHistory, { events: w.historyLength, workflow: `${w.workflowId} (${w.type})` });
    if ((w.historySize ?? 0) > largestHistory.bytes) Object.assign(largestHistory, { bytes: w.historySize, bytesWorkflow: `${w.workflowId} (${w.type})` });
  }
  try {
    await o.after?.(env.client, handle);
  } finally {
    await env.teardown();
  }
  return {
    nodes,
    outcome,
    nodesCycled: lastState?.nodesCycled ?? 0,
    payloads,
    largestHistory,
    largestStatusBytes,
    statusQueries,
    rssPeakMb: rssPeak / 1024 / 1024,
    memoryAtPeak: atPeak,
    rssStartMb: rssStart / 1024 / 1024,
    wallS,
    cpuS: (cpu.user + cpu.system) / 1e6,
  };
}
