// apiserver_request_total, read from the apiserver's /metrics, for counting the requests a drain makes.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { cpus, homedir } from 'node:os';

export type Counters = Map<string, number>;

export function scrapeRequests(): Counters {
  const text = execFileSync('kubectl', ['get', '--raw', '/metrics'], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const out: Counters = new Map();
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const m = /^apiserver_request_total\{(.*)\} (\S+)$/.exec(line);
    if (!m) continue;
    const labels = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1]!, x[2]!]));
    const key = `${labels.verb} ${labels.resource}${labels.subresource ? `/${labels.subresource}` : ''} (${labels.scope})`;
    out.set(key, (out.get(key) ?? 0) + Number(m[2]));
  }
  return out;
}

export function delta(before: Counters, after: Counters): Counters {
  const d: Counters = new Map();
  for (const [k, v] of after) {
    const x = v - (before.get(k) ?? 0);
    if (x > 0) d.set(k, x);
  }
  return d;
}

/**
 * Series that, during a drain, only the drain produces: the other components (controller-manager,
 * scheduler, kwok) work from informers started long before, and write pods, bindings, statuses and
 * events, which are left out here.
 */
export const DRAIN_SERIES = [
  /^POST pods\/eviction /,
  /^(LIST|WATCH) pods \(cluster\)/,
  /^GET nodes \(resource\)/,
  /^PATCH nodes \(resource\)/,
  // The wave waits' node watches, and the worker's node cache that replaces them (the other
  // components' node informers run long streams: a restart of one shows here too, rarely).
  /^(LIST|WATCH) nodes \(cluster\)/,
  /^(LIST|WATCH) drainrules /,
  /^LIST daemonsets /,
  /^LIST namespaces /,
  /^(LIST|WATCH) volumeattachments /,
  /^LIST persistentvolumes /,
];

export function drainRequests(d: Counters): { total: number; series: Array<[string, number]> } {
  const series = [...d].filter(([k]) => DRAIN_SERIES.some((r) => r.test(k))).sort(([a], [b]) => (a < b ? -1 : 1));
  return { total: series.reduce((n, [, v]) => n + v, 0), series };
}

/** CPU seconds (user + system) each stack component and the given extra processes have used so far, from /proc. */
export function cpuSeconds(extra: Record<string, number> = {}): Map<string, number> {
  const run = `${process.env.SLIPWAY_HOME ?? `${homedir()}/.cache/slipway`}/run`;
  const pids: Record<string, number> = { ...extra };
  for (const f of readdirSync(run).filter((f) => f.endsWith('.pid'))) pids[f.slice(0, -4)] = Number(readFileSync(`${run}/${f}`, 'utf8'));
  const tick = 100; // USER_HZ on Linux
  const out = new Map<string, number>();
  for (const [name, pid] of Object.entries(pids)) {
    try {
      // fields after the command: state is field 3; utime 14, stime 15, cutime 16, cstime 17
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
      out.set(name, (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / tick);
    } catch {
      // not running
    }
  }
  return out;
}

export function formatCpu(before: Map<string, number>, after: Map<string, number>, wallS: number): string {
  const rows = [...after].map(([k, v]) => [k, v - (before.get(k) ?? 0)] as const).sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((n, [, v]) => n + v, 0);
  return `CPU over ${wallS.toFixed(1)} s on ${cpus().length} cores: ${rows.map(([k, v]) => `${k} ${v.toFixed(1)} s`).join(', ')}; total ${total.toFixed(1)} s (${((total / wallS / cpus().length) * 100).toFixed(0)}% of the machine)`;
}
