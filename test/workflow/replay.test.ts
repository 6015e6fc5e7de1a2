// Replays the histories recorded on the local stack (test/histories/*.json, `npm run
// record-histories`) against the current workflow code. A workflow still running in production
// resumes on new code by replaying its history: a change that would make the code issue different
// commands for the same history (reordered or new activities, timers, children) fails here, by
// file, instead of failing live workflows with a nondeterminism error. Such a change needs
// `patched()` (docs/design.md, "Replay tests").
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker, type ReplayResult } from '@temporalio/worker';
import { historyFromJson } from '../support/histories.js';
import { workflowCode } from '../support/workflow-env.js';

const DIR = 'test/histories';
const files = readdirSync(DIR).filter((f) => f.endsWith('.json')).sort();
const results = new Map<string, ReplayResult>();

beforeAll(async () => {
  const histories = files.map((file) => {
    const history = historyFromJson(JSON.parse(readFileSync(join(DIR, file), 'utf8')));
    // The workflow's own ID is part of what it decides with (its children's IDs derive from it).
    const workflowId = history.events![0]!.workflowExecutionStartedEventAttributes!.workflowId!;
    return { file, workflowId, history };
  });
  const fileOf = new Map(histories.map((h) => [h.workflowId, h.file]));
  for await (const r of Worker.runReplayHistories({ ...workflowCode(), replayName: 'slipway-replay-test' }, histories)) results.set(fileOf.get(r.workflowId)!, r);
}, 60_000);

test('there are recorded histories of drains, a cycle and maintenances (with their node coordinators) to replay', () => {
  expect(files.some((f) => f.startsWith('drain-'))).toBe(true);
  expect(files.some((f) => f.startsWith('cycle-'))).toBe(true);
  expect(files.some((f) => f.startsWith('maintenance-') && f.includes('coordinator'))).toBe(true);
});

test.each(files)('%s replays on the current workflow code without nondeterminism', (file) => {
  const r = results.get(file);
  expect(r).toBeDefined();
  if (r!.error) throw r!.error; // its message names the event and the command that differ
});
