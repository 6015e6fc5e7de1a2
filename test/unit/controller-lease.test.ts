// Leader election's decision: given the Lease as read, our identity, the time and when we first saw
// the lease's current record: create, acquire, renew, or wait.
import { decideLease, leaseRecordKey } from '../../kube/controller/lease.js';

const me = 'host_1_aaaa';
const other = 'host_2_bbbb';
const now = Date.parse('2026-01-01T10:00:30Z');
const base = { identity: me, now, observedAt: now, defaultDurationSeconds: 15 };
const lease = (holderIdentity: string | undefined, renewedSecondsAgo: number) => ({
  holderIdentity,
  renewTime: new Date(now - renewedSecondsAgo * 1000),
  leaseDurationSeconds: 15,
});

test('no lease: create it', () => {
  expect(decideLease({ ...base, lease: undefined })).toEqual({ action: 'create' });
});

test('our own lease: renew', () => {
  expect(decideLease({ ...base, lease: lease(me, 4) })).toEqual({ action: 'renew' });
});

test('a released lease (no holder): acquire at once', () => {
  expect(decideLease({ ...base, lease: lease(undefined, 1) })).toEqual({ action: 'acquire', reason: 'free' });
  expect(decideLease({ ...base, lease: lease('', 1) })).toEqual({ action: 'acquire', reason: 'free' });
});

test("another holder's fresh lease: wait until it would expire", () => {
  expect(decideLease({ ...base, lease: lease(other, 2) })).toEqual({ action: 'wait', holder: other, expiresInMs: 15_000 });
});

test('a lease unchanged for the whole duration in our observation: acquire (expired)', () => {
  expect(decideLease({ ...base, lease: lease(other, 10), observedAt: now - 15_000 })).toEqual({ action: 'acquire', reason: 'expired' });
  expect(decideLease({ ...base, lease: lease(other, 10), observedAt: now - 14_999 })).toMatchObject({ action: 'wait', expiresInMs: 1 });
});

test("only our own observation counts, never the holder's renewTime (clock skew cannot make two leaders)", () => {
  // Renewed "an hour ago" by the holder's clock, but we saw this record only now: wait one duration.
  expect(decideLease({ ...base, lease: lease(other, 3600) })).toEqual({ action: 'wait', holder: other, expiresInMs: 15_000 });
  // Renewed "in the future" by a fast clock: same rule.
  expect(decideLease({ ...base, lease: lease(other, -3600), observedAt: now - 15_000 })).toEqual({ action: 'acquire', reason: 'expired' });
});

test('the lease duration comes from the lease, else the default', () => {
  expect(decideLease({ ...base, lease: { ...lease(other, 0), leaseDurationSeconds: 60 } })).toMatchObject({ action: 'wait', expiresInMs: 60_000 });
  expect(decideLease({ ...base, lease: { holderIdentity: other } })).toMatchObject({ action: 'wait', expiresInMs: 15_000 });
});

test('the record key changes with every renewal and holder change', () => {
  const a = leaseRecordKey(lease(other, 5));
  expect(leaseRecordKey(lease(other, 4))).not.toBe(a);
  expect(leaseRecordKey({ ...lease(other, 5), holderIdentity: me })).not.toBe(a);
  expect(leaseRecordKey(lease(other, 5))).toBe(a);
});
