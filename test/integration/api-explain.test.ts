// #25.2 The API explains itself: `kubectl explain` on the installed CRDs prints each kind's
// description, its spec's, and a nested field's, as written in the zod types (api/).
import { execFileSync } from 'node:child_process';
import type { z } from 'zod';
import { CRDS } from '../../api/crds.js';
import { installCrds } from '../../starter/install-crds.js';
import { loadKubeConfig } from '../../kube/client.js';
import { waitFor } from '../support/wait.js';

const describeOf = (s: z.ZodType) => s.description ?? '';
/** A nested field for each kind, with the zod type that describes it. */
const NESTED: Record<string, string> = {
  DrainRule: 'spec.drain.behavior',
  CycleNodeRequest: 'spec.cycleSettings.concurrency',
  CycleNodeStatus: 'status.phase',
  NodeMaintenance: 'spec.stage',
  NodeDisruptionBudget: 'spec.perZone.topologyKey',
  NodeGroup: 'spec.driftObserver.interval',
  Evacuation: 'spec.podRef.uid',
};

// kubectl explain wraps long lines: compare the words.
const words = (t: string) => t.replace(/\s+/g, ' ').trim();
const explain = (path: string) => words(execFileSync('kubectl', ['explain', `${path}`, '--api-version=slipway.dev/v1alpha1'], { encoding: 'utf8' }));
/** The description of the field at `path` in the CRD as generated. */
function fieldDescription(kind: string, path: string): string {
  const def = CRDS.find((d) => d.kind === kind)!;
  const [root, ...rest] = path.split('.');
  let s = (root === 'spec' ? def.spec : def.status!) as unknown as { description?: string; unwrap?: () => unknown; shape?: Record<string, unknown>; def?: { innerType?: unknown; in?: unknown } };
  for (const p of rest) {
    // Through .optional()/.default()/.transform() wrappers to the object that has the field.
    while (!s.shape) s = ((s.def?.innerType ?? s.def?.in) as typeof s);
    s = s.shape[p] as typeof s;
  }
  return describeOf(s as unknown as z.ZodType);
}

beforeAll(async () => {
  await installCrds(loadKubeConfig());
  // The apiserver republishes its OpenAPI document a moment after a CRD changes.
  for (const d of CRDS) await waitFor(`kubectl explain ${d.kind} to show the installed CRD`, async () => explain(d.kind.toLowerCase()).includes(words(d.description)), { timeoutMs: 60_000, intervalMs: 1000 });
}, 120_000);

describe('#25.2 kubectl explain', () => {
  test.each(CRDS.map((d) => d.kind))('#25.2 kubectl explain %s, its spec and a nested field print their descriptions', (kind) => {
    const def = CRDS.find((d) => d.kind === kind)!;
    expect(explain(kind.toLowerCase())).toContain(words(def.description));
    const spec = explain(`${kind.toLowerCase()}.spec`);
    expect(spec).toContain(words(describeOf(def.spec)));
    const nested = NESTED[kind]!;
    const text = fieldDescription(kind, nested);
    expect(text.length).toBeGreaterThan(10);
    expect(explain(`${kind.toLowerCase()}.${nested}`)).toContain(words(text));
  });
});
