// The metric names deploy/components/monitoring uses (the PrometheusRule's expressions and the
// dashboard's queries): test/integration/metrics.test.ts finds each on a live scrape.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';

const DIR = 'deploy/components/monitoring';

export function monitoringMetricNames(): string[] {
  const rule = parse(readFileSync(`${DIR}/prometheusrule.yaml`, 'utf8')) as { spec: { groups: Array<{ rules: Array<{ expr: string }> }> } };
  const dash = JSON.parse(readFileSync(`${DIR}/dashboard.json`, 'utf8')) as { panels: Array<{ targets?: Array<{ expr: string }> }>; templating: { list: Array<{ query?: unknown }> } };
  const exprs = [
    ...rule.spec.groups.flatMap((g) => g.rules.map((r) => r.expr)),
    ...dash.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)),
    ...dash.templating.list.map((v) => (typeof v.query === 'string' ? v.query : '')),
  ];
  const names = new Set<string>();
  for (const e of exprs) for (const m of e.matchAll(/\b((?:slipway|temporal|process)_[a-z0-9_]+)/g)) names.add(m[1]!);
  return [...names].sort();
}
