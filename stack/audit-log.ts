// The apiserver's audit log as evidence: a mark taken before an act, and the events written since.
// The stack's apiserver rotates the log (--audit-log-maxsize): the file is renamed to
// audit-<time>.log, keeping its inode, and a new audit.log begins. A mark names the file by identity
// (inode and birth time), so a read after a rotation goes on in the renamed file from the mark, then
// reads the newer files whole. Before, a rotation silently dropped everything between the mark and
// the rotation, and an assertion that something happened (or that nothing did) judged half the record.
import type { Stats } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';

export interface AuditEvent {
  verb: string;
  stage: string;
  requestReceivedTimestamp: string;
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  user?: { username?: string };
  userAgent?: string;
}

/** A place in the audit log: the file (by identity, which a rotation's rename keeps) and a byte offset in it. */
export interface AuditMark {
  file: string;
  offset: number;
}

/** A file's identity across renames: its inode, and its birth time so a reused inode is a new file. */
const fileId = (s: Stats) => `${s.dev}:${s.ino}:${s.birthtimeMs}`;

const logPath = () => {
  const p = process.env.SLIPWAY_AUDIT_LOG;
  if (!p) throw new Error('SLIPWAY_AUDIT_LOG is not set: run eval "$(bash stack/stack.sh env)"');
  return p;
};

/** A rotation landed during a read: the live file was missing for a moment, or is another file now. */
class RotatedMeanwhile extends Error {}
const missingAsRotated = (path: string) => (e: NodeJS.ErrnoException): never => {
  throw e.code === 'ENOENT' ? new RotatedMeanwhile(`${path} is missing`) : e;
};

/** Runs `fn` again while a rotation (a rename, then a new file) lands during it, for about a second. */
async function acrossRotation<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (!(e instanceof RotatedMeanwhile) || attempt >= 20) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** Where the audit log ends now: read from here after the act. */
export function auditMark(path = logPath()): Promise<AuditMark> {
  return acrossRotation(async () => {
    const s = await stat(path).catch(missingAsRotated(path));
    return { file: fileId(s), offset: s.size };
  });
}

/** The rotated files of `path` (audit-<time>.log beside audit.log), oldest first, with their identities. */
async function rotated(path: string): Promise<{ path: string; id: string }[]> {
  const ext = extname(path);
  const prefix = `${basename(path, ext)}-`;
  const names = (await readdir(dirname(path))).filter((n) => n.startsWith(prefix) && n.endsWith(ext)).sort(); // the time sorts as text
  const out: { path: string; id: string }[] = [];
  for (const n of names) {
    const p = join(dirname(path), n);
    try {
      out.push({ path: p, id: fileId(await stat(p)) });
    } catch {
      // pruned meanwhile (--audit-log-maxbackup): older than anything we could still need, or caught below
    }
  }
  return out;
}

/** Parsed events per file (by identity), kept between reads so a test that polls the log parses each byte once. */
interface Parsed {
  from: number; // the offset parsing began at
  pos: number; // the byte after the last whole line parsed
  events: { at: number; event: AuditEvent }[];
}
const parsed = new Map<string, Parsed>();

/**
 * One event, or nothing for a cut line: a mark taken mid-write starts inside one, and an apiserver
 * killed mid-write (the chaos runs restart it) leaves one that the restarted server's next line joins.
 */
function parseLine(line: string): AuditEvent | undefined {
  try {
    return JSON.parse(line) as AuditEvent;
  } catch {
    return undefined;
  }
}

async function readFile(path: string, id: string, from: number): Promise<AuditEvent[]> {
  let p = parsed.get(id);
  if (!p || p.from > from) {
    p = { from, pos: from, events: [] };
    parsed.set(id, p);
  }
  const fh = await open(path, 'r').catch(missingAsRotated(path));
  try {
    const s = await fh.stat();
    if (fileId(s) !== id) throw new RotatedMeanwhile(`${path} was rotated`);
    const size = s.size;
    if (size > p.pos) {
      const buf = Buffer.alloc(size - p.pos);
      await fh.read(buf, 0, buf.length, p.pos);
      const end = buf.lastIndexOf(0x0a) + 1; // a line cut at the end is being written: take it next time
      let at = p.pos;
      for (const line of buf.subarray(0, end).toString('utf8').split('\n')) {
        const bytes = Buffer.byteLength(line) + 1;
        const event = line.trim() ? parseLine(line) : undefined;
        if (event?.stage === 'ResponseComplete') p.events.push({ at, event });
        at += bytes;
      }
      p.pos += end;
    }
  } finally {
    await fh.close();
  }
  return p.events.filter((x) => x.at >= from).map((x) => x.event);
}

/**
 * The audit log's ResponseComplete events written after `mark`, in order, across rotations: the
 * marked file from the mark, every file rotated after it, then the live file. Without a mark, the
 * live file from its start. A mark whose file was already pruned is an error, not an empty answer.
 */
export function readAuditSince(mark: AuditMark | undefined, path = logPath()): Promise<AuditEvent[]> {
  return acrossRotation(() => readChain(mark, path)); // renamed between the listing and the read: list again
}

async function readChain(mark: AuditMark | undefined, path: string): Promise<AuditEvent[]> {
  const live = await stat(path).catch(missingAsRotated(path));
  const liveId = fileId(live);
  if (!mark) return readFile(path, liveId, 0);
  if (mark.file === liveId) return readFile(path, liveId, mark.offset);
  const files = await rotated(path);
  const i = files.findIndex((f) => f.id === mark.file);
  if (i < 0) throw new Error(`the audit log was rotated past the mark and its file pruned (${path}): raise SLIPWAY_AUDIT_LOG_MAXBACKUP (stack/stack.sh) and restart kube-apiserver`);
  const out: AuditEvent[] = [];
  for (const [k, f] of files.slice(i).entries()) out.push(...(await readFile(f.path, f.id, k === 0 ? mark.offset : 0)));
  out.push(...(await readFile(path, liveId, 0)));
  return out;
}
