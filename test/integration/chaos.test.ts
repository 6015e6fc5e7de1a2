// The reduced chaos set (bench/chaos/faults.ts REDUCED): the runner of `npm run chaos` kills the
// worker (mid-wave, after the node delete, mid-heal, a NodeMaintenance's drain mid-wave) and the
// bridge (after the workflow start, after the cancel of a deleted request, before a deleted
// NodeMaintenance's finalizer removal) at their failpoints and restarts Temporal mid-drain; after each
// run every invariant (stack/invariants.ts) must hold, judged from the audit log, the Nodes and moto.
import type { Client } from '@temporalio/client';
import { connectClient } from '../../starter/client.js';
import { allFaults, REDUCED } from '../../bench/chaos/faults.js';
import { runFault } from '../../bench/chaos/run.js';
import { row } from '../../bench/chaos/table.js';

let client: Client;
beforeAll(async () => {
  client = await connectClient();
});
afterAll(async () => {
  await client?.connection.close();
});

const faults = allFaults().filter((f) => REDUCED.includes(f.name));

test('the reduced set covers the worker, the bridge and a server restart', () => {
  expect(faults.map((f) => f.name).sort()).toEqual([...REDUCED].sort());
  expect(new Set(faults.map((f) => (f.kind === 'point' ? f.process : 'server')))).toEqual(new Set(['worker', 'bridge', 'server']));
});

test.each(faults.map((f) => [f.name, f] as const))('%s: the fault lands, the request ends, every invariant holds', async (_name, fault) => {
  const r = await runFault(fault, { client, limitMs: 150_000 });
  process.stdout.write(`${row(r, fault)}\n`);
  expect(r.error).toBeUndefined();
  expect(r.outcome).toMatch(fault.kind === 'server' ? /back after/ : /killed \(SIGKILL\)/);
  expect(r.resumeMs).toBeDefined();
  expect(r.verdicts.filter((v) => !v.ok)).toEqual([]);
  expect(r.verdicts).toHaveLength(9);
}, 300_000);
