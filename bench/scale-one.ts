// One run of the scale benchmark, in a process of its own (bench/scale.ts starts it), so its RSS
// peak is the worker's and the client's alone (no bundler, no earlier run) and a run that hangs
// is killed without taking the others with it. Input in the environment; output: its lines, then
// one JSON line of per-node figures for the next sizes' comparison.
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { kib, PAYLOAD_KINDS } from './payload-sizes.js';
import { runScale } from './scale-run.js';
import { ec2StubCluster } from './stub-activities.js';
import { heapLimitMiB, workerTuning } from '../worker/config.js';

const KIB = 1024;
const TARGET = { payloadBytes: 256 * KIB, events: 10_000, statusBytes: 256 * KIB, rssMb: 300, flat: 0.1 };
/** Temporal's and etcd's hard limits, printed beside the targets. */
const LIMIT = { payloadBytes: 2 * KIB * KIB, payloadWarnBytes: 512 * KIB, events: 51_200, historyBytes: 50 * KIB * KIB, etcdBytes: 1.5 * KIB * KIB };

const nodes = Number(process.env.SLIPWAY_SCALE_ONE_NODES);
const concurrency = process.env.SLIPWAY_SCALE_ONE_CONCURRENCY === 'all' ? undefined : Number(process.env.SLIPWAY_SCALE_ONE_CONCURRENCY);
const timeoutS = Number(process.env.SLIPWAY_SCALE_TIMEOUT_S ?? 600);
/** Per-node wall and CPU (ms) of the smallest size that finished, to compare with. */
const baseline = process.env.SLIPWAY_SCALE_BASELINE ? (JSON.parse(process.env.SLIPWAY_SCALE_BASELINE) as { nodes: number; wallMs: number; cpuMs: number }) : undefined;

Runtime.install({ logger: new DefaultLogger('WARN') });
const f = await runScale({ cluster: ec2StubCluster(nodes, 'scale'), concurrency, timeoutMs: timeoutS * 1000, bundlePath: process.env.SLIPWAY_SCALE_BUNDLE });

const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');
const mib = (b: number) => `${(b / KIB / KIB).toFixed(1)} MiB`;
console.log(`scale: ${f.nodes} nodes (EC2 names), concurrency ${concurrency ?? 'all'}, stub activities, own dev server`);
console.log(`  process: heap limit ${heapLimitMiB().toFixed(0)} MiB (${process.execArgv.join(' ') || 'no flags'}), maxCachedWorkflows ${workerTuning().maxCachedWorkflows}, MALLOC_ARENA_MAX ${process.env.MALLOC_ARENA_MAX ?? 'unset'}`);
console.log(`  outcome: ${f.outcome}; ${f.nodesCycled}/${f.nodes} cycled (last status seen), wall ${f.wallS.toFixed(0)} s`);
for (const k of PAYLOAD_KINDS) {
  const r = f.payloads.largest(k);
  if (!r) continue;
  const over = r.bytes > LIMIT.payloadBytes ? `; over Temporal's ${kib(LIMIT.payloadBytes)} limit` : r.bytes > LIMIT.payloadWarnBytes ? `; over Temporal's ${kib(LIMIT.payloadWarnBytes)} warning` : '';
  console.log(`  largest ${k}: ${kib(r.bytes)} (${r.name}, ${r.workflowId}; ${f.payloads.count(k)} seen) — target ≤ ${kib(TARGET.payloadBytes)}: ${verdict(r.bytes <= TARGET.payloadBytes)}${over}`);
}
const h = f.largestHistory;
console.log(`  largest history: ${h.events} events (${h.workflow}) — target ≤ ${TARGET.events}: ${verdict(h.events <= TARGET.events)} (limit ${LIMIT.events}); largest in bytes ${mib(h.bytes)} (${h.bytesWorkflow}) (limit ${mib(LIMIT.historyBytes)})`);
const etcd = f.largestStatusBytes > LIMIT.etcdBytes ? `; over etcd's ${mib(LIMIT.etcdBytes)} request limit` : '';
console.log(`  largest status the bridge would write: ${kib(f.largestStatusBytes)} (${f.statusQueries} status queries) — target ≤ ${kib(TARGET.statusBytes)}: ${verdict(f.largestStatusBytes <= TARGET.statusBytes)}${etcd}`);
console.log(`  RSS peak of the worker + client process: ${f.rssPeakMb.toFixed(0)} MB (${f.rssStartMb.toFixed(0)} MB before the request started) — target ≤ ${TARGET.rssMb}: ${verdict(f.rssPeakMb <= TARGET.rssMb)}`);
const m = f.memoryAtPeak;
const mb = (b: number) => `${(b / KIB / KIB).toFixed(0)} MB`;
console.log(`    at the peak: V8 heap used ${mb(m.heapUsed)} of ${mb(m.heapTotal)}, external ${mb(m.external)} (array buffers ${mb(m.arrayBuffers)}), the rest native ${mb(m.rss - m.heapTotal - m.external)}`);
const done = f.nodesCycled;
const wallMs = done ? (f.wallS * 1000) / done : NaN;
const cpuMs = done ? (f.cpuS * 1000) / done : NaN;
const flat = (x: number, y: number | undefined) => (baseline && y && Number.isFinite(x) ? ` (${((x / y - 1) * 100).toFixed(0)}% vs ${baseline.nodes} nodes; target within ±${TARGET.flat * 100}%: ${verdict(Math.abs(x / y - 1) <= TARGET.flat)})` : '');
if (!done) console.log('  per node cycled: n/a (no node cycled)');
else console.log(`  per node cycled: wall ${wallMs.toFixed(1)} ms${flat(wallMs, baseline?.wallMs)}, CPU of this process ${cpuMs.toFixed(1)} ms${flat(cpuMs, baseline?.cpuMs)} (machine shared: rough)`);
console.log(JSON.stringify({ nodes, finished: f.outcome === 'Successful', wallMs, cpuMs }));
process.exit(0); // the native runtime keeps a handle open
