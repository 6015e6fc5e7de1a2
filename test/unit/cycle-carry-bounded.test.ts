// #28: what a CycleNodeRequest carries across continue-as-new is bounded by its nodes in flight, and
// stays under 256 KiB at the largest concurrency the spec allows (1,000) with every node draining
// behind a long message: the carried live set's messages share a budget (carry.ts carried()).
import { payloadBytes } from '../../bench/payload-bytes.js';
import { drainMessage, emptyStatus } from '../../workflows/drain/status.js';
import { fresh, type RequestCarry } from '../../workflows/cycle/carry.js';
import * as carry from '../../workflows/cycle/carry.js';
import { boundedStatus, nodesChangedAfter } from '../../workflows/cycle/view.js';
import type { Request } from '../../workflows/cycle/request.js';

const KIB = 1024;
const BUDGET = 256 * KIB;
const ec2 = (i: number) => `ip-10-0-1-${String(i).padStart(5, '0')}.eu-west-1.compute.internal`;

/** A drain blocked as badly as its message can say: pods evicting, five groups blocked by PDBs, more waiting, more later. */
function longDrainMessage(node: string): string {
  const pod = (k: number) => `payments-prod/checkout-api-7f9c8d6b5-${String(k).padStart(5, 'x')}`;
  const s = emptyStatus(node);
  s.phase = 'Draining';
  s.startedAt = '2026-01-01T10:00:00.000Z';
  s.wave = {
    order: 0,
    evicting: [pod(1), pod(2), pod(3), pod(4)],
    blocked: Array.from({ length: 7 }, (_, g) => ({
      reason: `cannot evict: the disruption budget payments-prod/checkout-api-pdb-${g} needs 12 healthy pods and has 12 (Eviction API 429 Too Many Requests); retried every 5 s`,
      pdbs: [`payments-prod/checkout-api-pdb-${g}`],
      pods: [pod(10 + g * 4), pod(11 + g * 4), pod(12 + g * 4), pod(13 + g * 4)],
    })),
    waitingCompletion: [pod(60), pod(61), pod(62), pod(63)],
    evacuating: Array.from({ length: 7 }, (_, e) => ({ pod: pod(70 + e), message: 'evacuator storage.example.com/replicator is moving the volume to another zone (42% copied)' })),
  };
  s.returning = [{ pod: pod(80), reason: 'its owner recreates it on this node (a DaemonSet-like controller ignoring the cordon)' }];
  s.later = [{ order: 1, pods: [pod(90), pod(91), pod(92), pod(93)] }];
  return drainMessage(s);
}

/** A request at concurrency 1,000 over 5,000 EC2 nodes, every live node draining, its journal full. */
function bigCarry(): RequestCarry {
  const c = fresh();
  c.step = 'WaitingTermination';
  c.concurrency = 1_000;
  c.requested = 1_000;
  c.cursor = { after: ec2(1_999), taken: 2_000, done: false };
  c.st = { ...c.st, phase: 'WaitingTermination', message: '1000 nodes draining', nodesCycled: 1_000, nodesTotal: 5_000 };
  for (let i = 1_000; i < 2_000; i++) {
    const s = {
      nodeName: ec2(i), phase: 'DrainingPods' as const, providerID: `aws:///eu-west-1a/i-0${i.toString(16).padStart(16, '0')}`, nodeGroup: 'workers-eu-west-1a',
      startedAt: '2026-01-01T10:00:00.000Z', timeoutAt: '2026-01-01T13:00:00.000Z', message: 'draining: evicting the node\'s pods (a wave at a time)', drainMessage: longDrainMessage(ec2(i)), evicted: 17, seq: 9, change: 20_000 + i,
    };
    c.live[ec2(i)] = { s, ip: `10.0.${Math.floor(i / 250)}.${i % 250}`, at: 1_767_000_000_000, ready: true, cordoned: true, f: true, a: true, r: 3 };
  }
  c.batch = { nodes: Object.keys(c.live), toCordon: [], toStart: [] };
  for (let i = 0; i < 1_000; i++) c.journal.push({ nodeName: ec2(i), phase: 'Successful', providerID: `aws:///eu-west-1a/i-0${i.toString(16).padStart(16, '0')}`, nodeGroup: 'workers-eu-west-1a', message: 'cycled: drain completed, 17 pods evicted; node deleted, instance terminated', change: i });
  return c;
}

/** The carry as continue-as-new sends it (carried(): absent on the code before #28's share, which sent the state itself). */
const send = (c: RequestCarry): RequestCarry => ((carry as { carried?: (c: RequestCarry) => RequestCarry }).carried ?? ((x) => x))(c);
/** The carry as the next run takes it (through JSON, as the payload converter does). */
const receive = (c: RequestCarry): RequestCarry => ((carry as { restored?: (c: RequestCarry) => RequestCarry }).restored ?? ((x) => x))(JSON.parse(JSON.stringify(c)) as RequestCarry);

describe('#28 the carry of a CycleNodeRequest at concurrency 1,000', () => {
  test('#28 1,000 nodes draining behind 3 KiB drain messages: the carry stays under the 512 KiB warning (it was 3.9 MiB, past the 2 MiB limit), its messages cut, no node lost', () => {
    const c = bigCarry();
    const before = structuredClone(c);
    const out = send(c);
    expect(c).toEqual(before); // the state itself is not changed
    expect(payloadBytes([out])).toBeLessThanOrEqual(512 * KIB);
    const next = receive(out);
    expect(Object.keys(next.live)).toEqual(Object.keys(c.live));
    expect(Object.values(next.live).map((l) => [l.s.nodeName, l.s.phase, l.s.providerID, l.f, l.a])).toEqual(Object.values(c.live).map((l) => [l.s.nodeName, l.s.phase, l.s.providerID, l.f, l.a]));
    expect(out.journal.length).toBeGreaterThan(0);
    expect(out.journalFrom).toBe(out.journal[0]!.change! - 1);
  });

  test('#28 500 nodes draining behind 3 KiB drain messages (concurrency unset): the carry ≤ 256 KiB, the long messages cut, the short ones whole', () => {
    const c = bigCarry();
    for (const k of Object.keys(c.live).slice(500)) delete c.live[k];
    c.batch.nodes = Object.keys(c.live);
    // Ten of them with a short message: kept whole.
    for (const l of Object.values(c.live).slice(0, 10)) [l.s.message, l.s.drainMessage] = ['draining', undefined];
    const out = send(c);
    expect(payloadBytes([out])).toBeLessThanOrEqual(BUDGET);
    for (const [i, l] of Object.values(receive(out).live).entries()) {
      const was = Object.values(c.live)[i]!.s;
      if (i < 10) expect([l.s.message, l.s.drainMessage]).toEqual([was.message, was.drainMessage]);
      else expect(`${l.s.message ?? ''}${l.s.drainMessage ?? ''}`.length).toBeLessThan(`${was.message}${was.drainMessage}`.length);
    }
  });

  test('#28 a carry with room keeps every message whole and the journal up to its 48 KiB', () => {
    const c = bigCarry();
    for (const k of Object.keys(c.live).slice(20)) delete c.live[k];
    c.batch.nodes = Object.keys(c.live);
    const out = send(c);
    expect(receive(out).live).toEqual(c.live);
    expect(JSON.stringify(out.journal).length).toBeGreaterThan(40 * KIB);
    expect(JSON.stringify(out.journal).length).toBeLessThanOrEqual(48 * KIB + out.journal.length);
    expect(out.journal.at(-1)).toEqual(c.journal.at(-1));
  });
});

test('#28 the messages share the room fairly: the short whole, the long cut to one cap', () => {
  const fairCap = (carry as { fairCap?: (l: number[], room: number, overhead: number) => number }).fairCap;
  expect(fairCap?.([10, 10, 100], 100, 0)).toBe(80);
  expect(fairCap?.([10, 10, 100], 1_000, 0)).toBe(Infinity);
  expect(fairCap?.([50, 50], 60, 10)).toBe(20);
});

describe('#28 what the request answers at concurrency 1,000', () => {
  /** The request as the answers read it: its state, its live nodes in the order taken. */
  const asked = (c: RequestCarry) => ({ c, st: c.st, liveNodes: () => Object.values(c.live) }) as unknown as Request;

  test('#28 1,000 nodes draining behind 3 KiB drain messages: the cycleStatus answer stays under the 512 KiB warning (it was 3.4 MiB) and a cycleNodes page ≤ 256 KiB, every in-flight node listed', () => {
    const c = bigCarry();
    const before = structuredClone(c);
    const status = boundedStatus(asked(c));
    // 1,000 in-flight entries without a message take about 260 KiB: the answer stays under the 512 KiB warning.
    expect(payloadBytes([status])).toBeLessThanOrEqual(512 * KIB);
    expect(status.nodes.filter((n) => n.phase === 'DrainingPods')).toHaveLength(1_000);
    const page = nodesChangedAfter(asked(c), 0);
    expect(payloadBytes([page])).toBeLessThanOrEqual(BUDGET);
    expect(page.nodes.length).toBeGreaterThan(0);
    expect(c).toEqual(before); // answers do not change the state
  });
});
