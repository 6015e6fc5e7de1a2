// #25.5 A release people can install: `npm run release:manifests` renders install.yaml (deploy/ with
// the CRDs, the image tagged with package.json's version) and install-monitoring.yaml (the monitoring
// component), and the local apiserver accepts both in a server-side dry run. The monitoring kinds
// need the prometheus-operator CRDs, which `stack/build.sh monitoring` takes from its Go module;
// they are installed on the stack here (only the two CRDs, nothing else of the operator).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { CRDS } from '../../api/crds.js';
import { apiStatus } from '../../kube/client.js';
import { testCluster } from '../support/cluster.js';

const IMAGE = 'registry.example.com/slipway';
const version = (JSON.parse(readFileSync('package.json', 'utf8')) as { version: string }).version;
execFileSync('npm', ['run', '-s', 'release:manifests'], { env: { ...process.env, SLIPWAY_IMAGE: IMAGE }, encoding: 'utf8' });
const read = (f: string) => readFileSync(join('dist/release', f), 'utf8');
const docs = (f: string) => parseAllDocuments(read(f)).map((d) => d.toJS() as { kind: string; metadata: { name: string }; spec?: { template?: { spec: { containers: Array<{ image: string }> } } } });

function dryRun(text: string): string[] {
  const out = execFileSync('kubectl', ['apply', '--server-side', '--dry-run=server', '--force-conflicts', '--field-manager=slipway', '-f', '-'], { input: text, encoding: 'utf8', env: process.env });
  return out.trim().split('\n');
}

describe('#25.5 release manifests', () => {
  test('install.yaml holds every CRD and both Deployments on the image tagged with the version', () => {
    const d = docs('install.yaml');
    for (const def of CRDS) expect(d.some((x) => x.kind === 'CustomResourceDefinition' && x.metadata.name === `${def.plural}.slipway.dev`)).toBe(true);
    const images = d.filter((x) => x.kind === 'Deployment').flatMap((x) => x.spec!.template!.spec.containers.map((c) => c.image));
    expect(images).toEqual([`${IMAGE}:${version}`, `${IMAGE}:${version}`]);
  });

  test('the apiserver accepts install.yaml and install-monitoring.yaml in a server-side dry run', async () => {
    const c = testCluster();
    try {
      await c.core.createNamespace({ body: { metadata: { name: 'slipway-system' } } });
    } catch (err) {
      if (apiStatus(err) !== 409) throw err;
    }
    const install = dryRun(read('install.yaml'));
    expect(install.length).toBe(docs('install.yaml').length);
    for (const l of install) expect(l).toMatch(/ serverside-applied \(server dry run\)$/);

    const crds = join(process.env.SLIPWAY_HOME ?? join(homedir(), '.cache/slipway'), 'prometheus-operator-crds');
    try {
      readdirSync(crds);
    } catch {
      execFileSync('bash', ['stack/build.sh', 'monitoring'], { stdio: 'inherit' });
    }
    execFileSync('kubectl', ['apply', '--server-side', '--force-conflicts', '--field-manager=slipway-test', '-f', crds], { encoding: 'utf8', env: process.env });
    execFileSync('kubectl', ['wait', '--for=condition=Established', '--timeout=60s', 'crd/servicemonitors.monitoring.coreos.com', 'crd/prometheusrules.monitoring.coreos.com'], { encoding: 'utf8', env: process.env });
    const monitoring = dryRun(read('install-monitoring.yaml'));
    expect(monitoring.sort()).toEqual(
      [
        'configmap/slipway-dashboard serverside-applied (server dry run)',
        'prometheusrule.monitoring.coreos.com/slipway serverside-applied (server dry run)',
        'servicemonitor.monitoring.coreos.com/slipway serverside-applied (server dry run)',
        'servicemonitor.monitoring.coreos.com/slipway-temporal-sdk serverside-applied (server dry run)',
      ].sort(),
    );
  }, 120_000);
});
