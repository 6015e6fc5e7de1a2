// Bundles the workflows once per jest run (webpack takes seconds), for every workflow test file:
// workers and the replay test load this bundle instead of bundling the sources again each.
// Jest loads global setup as CommonJS without the tests' module mapping: only packages and node:
// modules here, no relative imports.
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

const none = () => undefined;
const quiet = { log: none, trace: none, debug: none, info: none, warn: console.warn, error: console.error };

export default async function globalSetup(_global: unknown, project: { rootDir: string }): Promise<void> {
  const root = project.rootDir;
  const { code } = await bundleWorkflowCode({ workflowsPath: join(root, 'workflows/index.ts'), logger: quiet });
  const out = join(tmpdir(), `slipway-workflow-bundle-${createHash('sha256').update(root).digest('hex').slice(0, 12)}.js`);
  writeFileSync(out, code);
  process.env.SLIPWAY_TEST_WORKFLOW_BUNDLE = out; // BUNDLE_ENV in test/support/workflow-env.ts
}
