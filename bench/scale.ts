// Scale benchmark (SLIPWAY_BENCH=scale): one CycleNodeRequest of many nodes (SLIPWAY_SCALE_NODES,
// default 5,000) with stub activities that answer at once, on a Temporal dev server of its own (the
// stack's binary, in memory). The orchestration alone: prints the largest history of any workflow
// (target ≤ 10,000 events; the request continues as new) and the peak RSS of this process, which
// hosts the worker and the client (target ≤ 300 MB).
import { homedir } from 'node:os';
import { join } from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { temporal } from '@temporalio/proto';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';
import { ALL_SEARCH_ATTRIBUTES } from '../workflows/search-attributes.js';
import { cycleNodeRequestWorkflow } from '../workflows/cycle/request.js';
import { stubActivities, stubCluster } from './stub-activities.js';
import { cycleWorkflowId } from '../workflows/ids.js';

const NODES = Number(process.env.SLIPWAY_SCALE_NODES ?? 5000);
/** Default: every node in flight at once (the request's default concurrency), the hardest case for its history. */
const CONCURRENCY = process.env.SLIPWAY_SCALE_CONCURRENCY ? Number(process.env.SLIPWAY_SCALE_CONCURRENCY) : undefined;
const TARGET_EVENTS = 10_000;
const TARGET_RSS_MB = 300;

try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // installed by another benchmark in this process
}
const temporalBin = process.env.SLIPWAY_TEMPORAL_BIN ?? join(homedir(), '.cache/slipway/bin/temporal');
const env = await TestWorkflowEnvironment.createLocal({ server: { executable: { type: 'existing-path', path: temporalBin }, searchAttributes: ALL_SEARCH_ATTRIBUTES } });
const bundle = fileURLToPath(new URL('../workflow-bundle.js', import.meta.url));
const workflowsJs = fileURLToPath(new URL('../workflows/index.js', import.meta.url));
const cluster = stubCluster(NODES, 'scale');
const taskQueue = 'bench-scale';
const worker = await Worker.create({
  connection: env.nativeConnection,
  taskQueue,
  ...(existsSync(bundle) ? { workflowBundle: { codePath: bundle } } : { workflowsPath: existsSync(workflowsJs) ? workflowsJs : workflowsJs.replace(/\.js$/, '.ts') }),
  activities: stubActivities(cluster),
  maxCachedWorkflows: 100, // as the production worker (worker/config.ts)
});
const started = Date.now();
const workflowId = cycleWorkflowId({ namespace: 'bench', name: `scale-${NODES}`, uid: 'uid' });
const handle = await env.client.workflow.start(cycleNodeRequestWorkflow, {
  workflowId,
  taskQueue,
  args: [{ request: { namespace: 'bench', name: `scale-${NODES}`, uid: 'uid' }, spec: { nodeGroupName: 'scale', selector: { matchLabels: {} }, cycleSettings: { method: 'Drain', concurrency: CONCURRENCY } } }],
});
const firstRunId = handle.firstExecutionRunId;
const result = await worker.runUntil(handle.result());
const wallS = (Date.now() - started) / 1000;
const rssMb = process.resourceUsage().maxRSS / 1024;

// Every workflow's history length (visibility lags a little behind the closes).
await new Promise((r) => setTimeout(r, 2000));
let largest = { events: 0, id: '' };
let workflows = 0;
let requestRuns = 0;
for await (const w of env.client.workflow.list()) {
  workflows++;
  if (w.workflowId === workflowId) requestRuns++;
  if (w.historyLength > largest.events) largest = { events: w.historyLength, id: `${w.workflowId} (${w.type})` };
}
// The request's runs, following its continue-as-new chain, and the largest state it carried.
let carryBytes = 0;
let runId: string | undefined = firstRunId;
let chain = 0;
while (runId) {
  chain++;
  const history: temporal.api.history.v1.IHistory = await env.client.workflow.getHandle(workflowId, runId).fetchHistory();
  const next = (history.events ?? []).at(-1)?.workflowExecutionContinuedAsNewEventAttributes;
  carryBytes = Math.max(carryBytes, (next?.input?.payloads ?? []).reduce((n: number, p) => n + (p.data?.length ?? 0), 0));
  runId = next?.newExecutionRunId ?? undefined;
}
await env.teardown();

const terminatedOnce = [...cluster.terminated.values()].filter((n) => n === 1).length;
console.log(`scale: ${NODES} nodes, concurrency ${CONCURRENCY ?? 'all'}, stub activities, own dev server`);
console.log(`  result: ${result.phase}, ${result.nodesCycled}/${result.nodesTotal} cycled, ${terminatedOnce} old instances terminated exactly once, wall ${wallS.toFixed(0)} s`);
console.log(`  workflows: ${workflows}; the request ran ${chain} runs (${requestRuns} listed), largest state carried across continue-as-new: ${(carryBytes / 1024).toFixed(0)} KiB (Temporal's payload limit: 2,048 KiB)`);
console.log(`  largest history: ${largest.events} events, ${largest.id} (target ≤ ${TARGET_EVENTS}: ${largest.events <= TARGET_EVENTS ? 'met' : 'MISSED'})`);
console.log(`  peak RSS of the worker + client process: ${rssMb.toFixed(0)} MB (target ≤ ${TARGET_RSS_MB}: ${rssMb <= TARGET_RSS_MB ? 'met' : 'MISSED'})`);
