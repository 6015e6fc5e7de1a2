// #25.2 deploy/samples/ holds one example per kind; each is accepted by the apiserver as it stands
// (schema, CEL rules, admission policies), applied server-side as a dry run so that nothing acts on it.
import { execFileSync } from 'node:child_process';
import { CRDS } from '../../api/crds.js';
import { installCrds } from '../../starter/install-crds.js';
import { loadKubeConfig } from '../../kube/client.js';

beforeAll(async () => {
  await installCrds(loadKubeConfig());
});

describe('#25.2 deploy/samples', () => {
  test.each(CRDS.map((d) => d.kind))('#25.2 the %s sample applies server-side (dry run)', (kind) => {
    const file = `deploy/samples/${kind.toLowerCase()}.yaml`;
    const out = execFileSync('kubectl', ['apply', '--server-side', '--dry-run=server', '--field-manager=slipway-samples', '-o', 'json', '-f', file], { encoding: 'utf8' });
    const obj = JSON.parse(out) as { kind: string; spec: Record<string, unknown> };
    expect(obj.kind).toBe(kind);
    expect(Object.keys(obj.spec).length).toBeGreaterThan(0);
  });
});
