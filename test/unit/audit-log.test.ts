// The audit-log reader across the apiserver's rotation, on real files: the apiserver renames
// audit.log to audit-<time>.log and begins a new audit.log. A mark taken before the rotation must
// still see what was written after it in the renamed file (CI once lost an eviction this way, and a
// test judged only half the record).
import { appendFile, mkdtemp, rename, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { auditMark, readAuditSince } from '../../stack/audit-log.js';

let dir: string;
let log: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'slipway-audit-'));
  log = join(dir, 'audit.log');
  await writeFile(log, line('before'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const line = (name: string, stage = 'ResponseComplete') =>
  `${JSON.stringify({ verb: 'create', stage, requestReceivedTimestamp: '2026-11-26T00:00:00Z', objectRef: { resource: 'pods', subresource: 'eviction', name } })}\n`;
const names = async (mark?: Awaited<ReturnType<typeof auditMark>>) => (await readAuditSince(mark, log)).map((e) => e.objectRef?.name);
const rotate = (time: string) => rename(log, join(dir, `audit-${time}.log`));

test('without a rotation: the events after the mark, ResponseComplete only, in order', async () => {
  const mark = await auditMark(log);
  await appendFile(log, line('a') + line('a', 'RequestReceived') + line('b'));
  expect(await names(mark)).toEqual(['a', 'b']);
  expect(await names()).toEqual(['before', 'a', 'b']);
});

test('across a rotation: the rest of the renamed file, then the new file', async () => {
  const mark = await auditMark(log);
  await appendFile(log, line('evicted-before-rotation'));
  await rotate('2026-11-26T22-34-14.938');
  await writeFile(log, line('after'));
  expect(await names(mark)).toEqual(['evicted-before-rotation', 'after']);
});

test('across two rotations, with a read between them: every file after the mark, oldest first', async () => {
  const mark = await auditMark(log);
  await appendFile(log, line('a'));
  await rotate('2026-11-26T10-00-00.000');
  await writeFile(log, line('b'));
  expect(await names(mark)).toEqual(['a', 'b']);
  const later = await auditMark(log); // in the second file
  await appendFile(log, line('c'));
  await rotate('2026-11-26T11-00-00.000');
  await writeFile(log, line('d'));
  expect(await names(mark)).toEqual(['a', 'b', 'c', 'd']);
  expect(await names(later)).toEqual(['c', 'd']);
});

test('a line being written (no newline yet) is left for the next read, not dropped or half-parsed', async () => {
  const mark = await auditMark(log);
  const whole = line('cut');
  await appendFile(log, whole.slice(0, 40));
  expect(await names(mark)).toEqual([]);
  await appendFile(log, whole.slice(40));
  expect(await names(mark)).toEqual(['cut']);
});

test('a cut line (a mark taken mid-write, an apiserver killed mid-write) is skipped alone, and the lines after it are read', async () => {
  const whole = await auditMark(log);
  await appendFile(log, line('a') + line('b'));
  const inside = { ...whole, offset: whole.offset + 10 }; // inside the line of a
  expect(await names(inside)).toEqual(['b']);
  await appendFile(log, line('killed').slice(0, 30) + line('c'));
  expect(await names(inside)).toEqual(['b']); // the line of c is joined to the cut one
  await appendFile(log, line('d'));
  expect(await names(inside)).toEqual(['b', 'd']);
  expect(await names(whole)).toEqual(['a', 'b', 'd']);
});

test('reads that share the parsed file still answer each mark from its own place', async () => {
  const first = await auditMark(log);
  await appendFile(log, line('a'));
  const second = await auditMark(log);
  await appendFile(log, line('b'));
  expect(await names(second)).toEqual(['b']);
  expect(await names(first)).toEqual(['a', 'b']);
  expect(await names(second)).toEqual(['b']);
});

test('a mark whose file was pruned is an error, not an empty answer', async () => {
  const mark = await auditMark(log);
  await appendFile(log, line('lost'));
  await rotate('2026-11-26T10-00-00.000');
  await unlink(join(dir, 'audit-2026-11-26T10-00-00.000.log'));
  await writeFile(log, line('after'));
  await expect(readAuditSince(mark, log)).rejects.toThrow(/rotated past the mark/);
});
