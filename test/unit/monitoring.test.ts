// #25.4 Monitoring that plugs in: deploy/components/monitoring's PrometheusRule passes
// `promtool check rules`, its unit test (rules.test.yaml) fires the stuck-drain alert on a synthetic
// series, every alert carries a runbook line, and the dashboard is a ConfigMap Grafana's sidecar loads.
// promtool: Debian's, unpacked by `stack/build.sh monitoring` into $SLIPWAY_HOME/bin (run here when missing).
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { monitoringMetricNames } from '../support/monitoring.js';

const DIR = 'deploy/components/monitoring';
const bin = join(process.env.SLIPWAY_HOME ?? join(homedir(), '.cache/slipway'), 'bin');

function promtool(): string {
  const p = join(bin, 'promtool');
  if (!existsSync(p)) execFileSync('bash', ['stack/build.sh', 'monitoring'], { stdio: 'inherit' });
  return p;
}

interface Rule {
  alert?: string;
  expr: string;
  for?: string;
  annotations?: Record<string, string>;
}
const rule = parse(readFileSync(join(DIR, 'prometheusrule.yaml'), 'utf8')) as { kind: string; spec: { groups: Array<{ rules: Rule[] }> } };

/** spec.groups as a plain rule file beside a copy of rules.test.yaml. */
function ruleFiles(groups = rule.spec.groups): string {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-rules-'));
  writeFileSync(join(dir, 'rules.yaml'), stringify({ groups }));
  copyFileSync(join(DIR, 'rules.test.yaml'), join(dir, 'rules.test.yaml'));
  return dir;
}

describe('#25.4 monitoring component', () => {
  test('promtool check rules accepts the PrometheusRule spec', () => {
    const dir = ruleFiles();
    const r = spawnSync(promtool(), ['check', 'rules', join(dir, 'rules.yaml')], { encoding: 'utf8' });
    expect(r.stdout + r.stderr).toMatch(/SUCCESS: \d+ rules found/);
    expect(r.status).toBe(0);
  });

  test('promtool test rules: SlipwayDrainBlocked fires on a drain blocked by a PDB for 30 minutes, not before', () => {
    const dir = ruleFiles();
    const r = spawnSync(promtool(), ['test', 'rules', join(dir, 'rules.test.yaml')], { cwd: dir, encoding: 'utf8' });
    expect(r.stdout + r.stderr).toContain('SUCCESS');
    expect(r.status).toBe(0);
    // The same test fails against rules without the alert: it is the rule that fires, not the fixture.
    const without = ruleFiles(rule.spec.groups.map((g) => ({ ...g, rules: g.rules.filter((x) => x.alert !== 'SlipwayDrainBlocked') })));
    expect(spawnSync(promtool(), ['test', 'rules', join(without, 'rules.test.yaml')], { cwd: without, encoding: 'utf8' }).status).not.toBe(0);
  });

  test('every alert an operator pages on is there, each with a summary and a runbook line', () => {
    const alerts = rule.spec.groups.flatMap((g) => g.rules).filter((r) => r.alert);
    const names = alerts.map((a) => a.alert);
    for (const a of ['SlipwayDrainBlocked', 'SlipwayCycleRequestFailed', 'SlipwayWorkflowFailed', 'SlipwayWorkflowTaskFailing', 'SlipwayBridgeNoLeader', 'SlipwayBudgetExhausted']) expect(names).toContain(a);
    for (const a of alerts) {
      expect(a.annotations?.summary).toBeTruthy();
      expect(a.annotations?.runbook?.length).toBeGreaterThan(20);
    }
    // A drain blocked by each of the causes the issue names has a reason value the alert splits by.
    expect(readFileSync('starter/bridge/metrics.ts', 'utf8')).toMatch(/DRAIN_BLOCK_REASONS = \['pdb', 'hook', 'lock', 'evacuator'/);
  });

  test('the component renders ServiceMonitors for both ports, the rule, and the dashboard ConfigMap with the sidecar label', () => {
    const docs = parseAllDocuments(execFileSync('kubectl', ['kustomize', 'deploy/monitoring'], { encoding: 'utf8' })).map((d) => d.toJS());
    const kinds = docs.map((d) => `${d.kind}/${d.metadata.name}`).sort();
    expect(kinds).toEqual(['ConfigMap/slipway-dashboard', 'PrometheusRule/slipway', 'ServiceMonitor/slipway', 'ServiceMonitor/slipway-temporal-sdk']);
    const ports = docs.filter((d) => d.kind === 'ServiceMonitor').flatMap((d) => d.spec.endpoints.map((e: { port: string }) => e.port));
    expect(ports.sort()).toEqual(['metrics', 'sdk-metrics']);
    const cm = docs.find((d) => d.kind === 'ConfigMap');
    expect(cm.metadata.labels.grafana_dashboard).toBe('1');
    const dash = JSON.parse(cm.data['slipway.json']);
    expect(dash.panels.length).toBeGreaterThan(10);
    // The Services the ServiceMonitors select exist in deploy/ with those port names.
    const base = parseAllDocuments(execFileSync('kubectl', ['kustomize', 'deploy/'], { encoding: 'utf8' })).map((d) => d.toJS());
    const svcPorts = base.filter((d) => d.kind === 'Service').flatMap((d) => d.spec.ports.map((p: { name: string }) => `${d.metadata.name}:${p.name}`));
    expect(svcPorts.sort()).toEqual(['slipway-bridge:metrics', 'slipway-worker:metrics', 'slipway-worker:sdk-metrics']);
    expect(monitoringMetricNames()).toContain('slipway_build_info');
  });
});
