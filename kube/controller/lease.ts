// Leader election's decision, pure: given the Lease as last read, who we are and the time, do we
// acquire it, renew it, or wait. The elector (leader.ts) does the I/O.

export interface LeaseView {
  holderIdentity?: string;
  /** When the holder last renewed, by its clock. */
  renewTime?: Date;
  leaseDurationSeconds?: number;
}

export type LeaseDecision =
  | { action: 'create' }
  | { action: 'acquire'; reason: 'free' | 'expired' }
  | { action: 'renew' }
  | { action: 'wait'; holder: string; expiresInMs: number };

export interface DecideInput {
  /** The Lease as read; undefined when it does not exist. */
  lease: LeaseView | undefined;
  identity: string;
  now: number;
  /**
   * When this process first saw the lease's current (holder, renewTime), by its own clock. Every
   * renewal changes renewTime, so a record unchanged for a whole duration means a dead holder.
   */
  observedAt: number;
  /** Used when the lease has none. */
  defaultDurationSeconds: number;
}

/**
 * A lease is expired when it has not changed for leaseDurationSeconds as we observed it (client-go's
 * rule). Only our own clock is used: the holder's renewTime is never compared with it, so clock skew
 * between replicas cannot make two of them lead. A fresh replica therefore waits out one duration
 * before taking a lease whose holder died without releasing it.
 */
export function decideLease(i: DecideInput): LeaseDecision {
  if (!i.lease) return { action: 'create' };
  const holder = i.lease.holderIdentity ?? '';
  if (holder === i.identity) return { action: 'renew' };
  if (holder === '') return { action: 'acquire', reason: 'free' };
  const expiresAt = i.observedAt + (i.lease.leaseDurationSeconds ?? i.defaultDurationSeconds) * 1000;
  if (i.now >= expiresAt) return { action: 'acquire', reason: 'expired' };
  return { action: 'wait', holder, expiresInMs: expiresAt - i.now };
}

/** A stable fingerprint of what the holder changes on every renewal. */
export const leaseRecordKey = (l: LeaseView | undefined) => (l ? `${l.holderIdentity ?? ''}@${l.renewTime?.getTime() ?? ''}` : '');
