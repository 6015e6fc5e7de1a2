// The chaos runner's kill points (shared/failpoint.ts): armed by env or by a file that fires once,
// a no-op otherwise, and each registered name placed in product code outside workflows/.
import { jest } from '@jest/globals';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { FAILPOINTS, failpoint, shouldFire, type FailpointName } from '../../shared/failpoint.js';
import { drainCaller } from '../../workflows/ids.js';

const ROOT = join(import.meta.dirname, '../..');
const P: FailpointName = 'worker.drain.after-cordon';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? sources(p) : p.endsWith('.ts') ? [p] : [];
  });
}

test('unarmed, no point fires', () => {
  expect(shouldFire(P, {})).toBe(false);
});

test('SLIPWAY_FAILPOINTS fires the listed points every time, and only those', () => {
  const env = { SLIPWAY_FAILPOINTS: 'bridge.cnr.after-start, worker.drain.after-cordon' };
  expect(shouldFire(P, env)).toBe(true);
  expect(shouldFire(P, env)).toBe(true);
  expect(shouldFire('bridge.cnr.after-start', env)).toBe(true);
  expect(shouldFire('worker.drain.mid-wave', env)).toBe(false);
});

test('a point armed in SLIPWAY_FAILPOINTS_FILE fires once: the hit is recorded next to the file with its name', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fp-'));
  const file = join(dir, 'armed');
  const env = { SLIPWAY_FAILPOINTS_FILE: file };
  expect(shouldFire(P, env)).toBe(false); // no file yet: nothing armed
  writeFileSync(file, `${P}\n`);
  expect(shouldFire('worker.drain.mid-wave', env)).toBe(false);
  expect(existsSync(`${file}.hit`)).toBe(false);
  expect(shouldFire(P, env)).toBe(true);
  expect(readFileSync(`${file}.hit`, 'utf8')).toBe(`${P}\n`);
  expect(shouldFire(P, env)).toBe(false); // the restarted process passes it unharmed
});

test('RM-7.2 `name@N` in SLIPWAY_FAILPOINTS_FILE fires at the Nth pass of the point in this process, once', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fp-'));
  const file = join(dir, 'armed');
  const env = { SLIPWAY_FAILPOINTS_FILE: file };
  const Q: FailpointName = 'worker.maintenance.after-uncordon';
  writeFileSync(file, `${Q}@2\n`);
  expect(shouldFire(Q, env)).toBe(false); // the first node's release
  expect(shouldFire(Q, env)).toBe(true); // the second's
  expect(readFileSync(`${file}.hit`, 'utf8')).toBe(`${Q}\n`);
  expect(shouldFire(Q, env)).toBe(false);
});

test('failpoint() sends SIGKILL to its own process when armed', () => {
  const kill = jest.spyOn(process, 'kill').mockImplementation(() => true);
  const write = jest.spyOn(process.stderr, 'write');
  const before = process.env.SLIPWAY_FAILPOINTS;
  try {
    failpoint(P);
    expect(kill).not.toHaveBeenCalled();
    process.env.SLIPWAY_FAILPOINTS = P;
    failpoint('worker.drain.mid-wave');
    expect(kill).not.toHaveBeenCalled();
    failpoint(P);
    expect(kill).toHaveBeenCalledWith(process.pid, 'SIGKILL');
  } finally {
    if (before === undefined) delete process.env.SLIPWAY_FAILPOINTS;
    else process.env.SLIPWAY_FAILPOINTS = before;
    kill.mockRestore();
    write.mockRestore();
  }
});

test('at least 20 points; every registered point is placed exactly once in activities/ or starter/, none in workflows/', () => {
  const names = Object.keys(FAILPOINTS);
  expect(names.length).toBeGreaterThanOrEqual(20);
  const files = ['activities', 'starter', 'workflows', 'worker'].flatMap((d) => sources(join(ROOT, d)));
  const uses = files.flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/\bfailpoint\('([^']+)'\)/g)].map((m) => ({ file: relative(ROOT, f), name: m[1]! })));
  expect(uses.filter((u) => u.file.startsWith('workflows/') || u.file.startsWith('worker/'))).toEqual([]);
  expect(uses.map((u) => u.name).sort()).toEqual([...names].sort());
  for (const u of uses) expect(`${u.name} in ${u.file.split('/')[0]}`).toBe(`${u.name} in ${u.name.startsWith('bridge.') ? 'starter' : 'activities'}`);
});

test('a drain\'s points tell its caller by the workflow ID: a NodeMaintenance\'s, the CLI\'s, else a cycle\'s', () => {
  expect(drainCaller('nm-node/n1/drain')).toBe('maintenance');
  expect(drainCaller('drain/n1')).toBe('cli');
  expect(drainCaller('cnr/ns/r/uid/node/n1/drain')).toBe('cycle');
  expect(drainCaller(undefined)).toBe('cycle');
});
