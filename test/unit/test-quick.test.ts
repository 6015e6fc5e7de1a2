// `npm run test:quick` (test/run.sh quick) is the developer's loop: at most 5 minutes on the CI
// machine (issue 26 §6). It keeps that by two rules this file holds, so no coverage is lost for it:
// a test that runs a Temporal server is a workflow test (that project bundles the workflows once
// per run; a unit file bundled them again), and what quick leaves out is named in test/run.sh's SLOW,
// each an existing workflow file that `npm test` still runs.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');

test('#26.6 no unit test starts a Temporal server or bundles the workflows: those are workflow tests', () => {
  const serverUse = /TestWorkflowEnvironment|cycleEnv\(|startWorkflowEnv|useWorkflowEnv|bundleWorkflowCode|createLocal/;
  const offenders = readdirSync(join(root, 'test/unit'))
    .filter((f) => f.endsWith('.ts') && f !== 'test-quick.test.ts')
    .filter((f) => serverUse.test(readFileSync(join(root, 'test/unit', f), 'utf8')));
  expect(offenders).toEqual([]);
});

test('#26.6 test:quick leaves out only the workflow files named in SLOW, each one that npm test runs', () => {
  const script = readFileSync(join(root, 'test/run.sh'), 'utf8');
  const slow = /^SLOW=\(([^)]*)\)$/m.exec(script)?.[1]?.split(/\s+/).filter(Boolean);
  expect(slow?.length).toBeGreaterThan(0);
  for (const f of slow!) {
    expect(f).toMatch(/^test\/workflow\/[\w-]+\.test\.ts$/);
    expect(existsSync(join(root, f))).toBe(true);
  }
  // quick passes SLOW as ignore patterns; the full run selects the workflow project without any.
  expect(script).toMatch(/^  jest2? --selectProjects workflow --testPathIgnorePatterns \/node_modules\/ "\$\{SLOW\[@\]\}"$/m);
  expect(script).toMatch(/^jest --selectProjects workflow$/m);
});
