// The bridge's Lease identity: SLIPWAY_BRIDGE_IDENTITY (the pod's name) makes a restarted replica the
// Lease's holder again at once (lease.ts: a holder renews its own lease); without it each process
// is a new candidate that waits for the old lease to lapse.
import { defaultIdentity } from '../../starter/bridge/main.js';
import { decideLease } from '../../kube/controller/lease.js';

test('a replica with SLIPWAY_BRIDGE_IDENTITY keeps its identity across restarts; without it every process differs', () => {
  expect(defaultIdentity({ SLIPWAY_BRIDGE_IDENTITY: 'slipway-bridge-7d9f-abc' })).toBe('slipway-bridge-7d9f-abc');
  expect(defaultIdentity({})).not.toBe(defaultIdentity({}));
  expect(defaultIdentity({ SLIPWAY_BRIDGE_IDENTITY: '' })).toMatch(/_\d+_[0-9a-f]{8}$/);
});

test('restarted with the same identity, the replica renews the lease its dead process held instead of waiting 15 s', () => {
  const id = defaultIdentity({ SLIPWAY_BRIDGE_IDENTITY: 'slipway-bridge-0' });
  const now = Date.now();
  const held = { holderIdentity: 'slipway-bridge-0', leaseDurationSeconds: 15, renewTime: new Date(now - 1000) };
  expect(decideLease({ lease: held, identity: id, now, observedAt: now, defaultDurationSeconds: 15 })).toEqual({ action: 'renew' });
  expect(decideLease({ lease: held, identity: defaultIdentity({}), now, observedAt: now, defaultDurationSeconds: 15 })).toMatchObject({ action: 'wait' });
});
