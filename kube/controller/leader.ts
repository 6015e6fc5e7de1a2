// Leader election on a coordination.k8s.io/v1 Lease, so that of several bridge replicas exactly one
// starts workflows and writes status. Every write carries the resourceVersion it read (optimistic
// concurrency: a concurrent writer gets 409, never two holders). The leader renews every
// renewIntervalMs and stops leading once it has not renewed for renewDeadlineMs, well before the
// others may take the lease (leaseDurationSeconds after they last saw it change).
import { V1MicroTime, type CoordinationV1Api, type V1Lease } from '@kubernetes/client-node';
import { apiStatus } from '../client.js';
import { decideLease, leaseRecordKey, type LeaseView } from './lease.js';
import type { Log } from '../../shared/log.js';

export interface LeaderElectorOptions {
  coord: CoordinationV1Api;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationSeconds?: number;
  renewIntervalMs?: number;
  /** How often a follower looks at the lease. */
  retryIntervalMs?: number;
  /** The leader steps down when it has not renewed for this long (< leaseDurationSeconds). */
  renewDeadlineMs?: number;
  /** Called when this replica becomes the leader. Must not block for long. */
  onStartedLeading: () => void;
  /** Called when it stops (lost, not renewed in time, or stop()); awaited before the lease is released. */
  onStoppedLeading: (reason: string) => Promise<void>;
  log?: Log;
  now?: () => number;
}

const toDate = (v: unknown): Date | undefined => (v === undefined || v === null ? undefined : new Date(v as string));
const view = (l: V1Lease | undefined): LeaseView | undefined =>
  l && { holderIdentity: l.spec?.holderIdentity, renewTime: toDate(l.spec?.renewTime), leaseDurationSeconds: l.spec?.leaseDurationSeconds };

export class LeaderElector {
  private readonly o: Required<Omit<LeaderElectorOptions, 'log' | 'now'>> & Pick<LeaderElectorOptions, 'log'>;
  private readonly now: () => number;
  private leading = false;
  private lastRenew = 0;
  private lease: V1Lease | undefined;
  private observed = { key: '', at: 0 };
  private stopped = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;

  constructor(opts: LeaderElectorOptions) {
    const given = Object.fromEntries(Object.entries(opts).filter(([, v]) => v !== undefined)) as LeaderElectorOptions;
    this.o = { leaseDurationSeconds: 15, renewIntervalMs: 5000, retryIntervalMs: 2000, renewDeadlineMs: 10_000, ...given };
    this.now = opts.now ?? Date.now;
    if (this.o.renewDeadlineMs >= this.o.leaseDurationSeconds * 1000) throw new Error('renewDeadlineMs must be shorter than the lease duration');
  }

  get identity(): string {
    return this.o.identity;
  }

  /** True while this replica holds the lease and renewed it within renewDeadlineMs. Checked before every write. */
  isLeader(): boolean {
    return this.leading && this.now() - this.lastRenew < this.o.renewDeadlineMs;
  }

  start(): void {
    this.loop ??= this.run();
  }

  /** Stops electing; a leader stops leading (awaiting onStoppedLeading) and releases the lease. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    if (this.leading) {
      await this.stepDown('stopping');
      await this.release();
    }
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let ok = false;
      try {
        ok = await this.tryAcquireOrRenew();
      } catch (err) {
        this.log(`lease ${this.o.namespace}/${this.o.name}: ${err instanceof Error ? err.message : String(err)}`);
      }
      if (this.stopped) break;
      if (this.leading && !this.isLeader()) await this.stepDown(`lease not renewed for ${this.o.renewDeadlineMs} ms`);
      const delay = this.leading && ok ? this.o.renewIntervalMs : this.leading ? Math.min(1000, this.o.retryIntervalMs) : this.o.retryIntervalMs;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, delay);
        this.wake = () => {
          clearTimeout(t);
          resolve();
        };
      });
    }
  }

  /** One round: read (unless renewing our own lease), decide, write. True when we hold the lease after it. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const { coord, namespace, name } = this.o;
    if (this.leading && this.lease) {
      // Renew straight from the lease we last wrote; a 409 means someone else wrote it: read and decide.
      if (await this.write(this.withSpec(this.lease, { renewTime: new V1MicroTime(this.now()) }))) return true;
    }
    let lease: V1Lease | undefined;
    try {
      lease = await coord.readNamespacedLease({ namespace, name });
    } catch (err) {
      if (apiStatus(err) !== 404) throw err;
    }
    this.lease = lease;
    const key = leaseRecordKey(view(lease));
    if (key !== this.observed.key) this.observed = { key, at: this.now() };
    const d = decideLease({ lease: view(lease), identity: this.o.identity, now: this.now(), observedAt: this.observed.at, defaultDurationSeconds: this.o.leaseDurationSeconds });
    const now = new V1MicroTime(this.now());
    switch (d.action) {
      case 'create': {
        const body: V1Lease = {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace },
          spec: { holderIdentity: this.o.identity, leaseDurationSeconds: this.o.leaseDurationSeconds, acquireTime: now, renewTime: now, leaseTransitions: 0 },
        };
        const sentAt = this.now();
        try {
          this.lease = await coord.createNamespacedLease({ namespace, body });
        } catch (err) {
          if (apiStatus(err) === 409) return false; // another replica created it first
          throw err;
        }
        this.becomeLeader('created', sentAt);
        return true;
      }
      case 'acquire': {
        const transitions = (lease!.spec?.leaseTransitions ?? 0) + 1;
        const next = this.withSpec(lease!, {
          holderIdentity: this.o.identity,
          leaseDurationSeconds: this.o.leaseDurationSeconds,
          acquireTime: now,
          renewTime: now,
          leaseTransitions: transitions,
        });
        if (!(await this.write(next))) return false;
        this.becomeLeader(d.reason === 'free' ? 'acquired (free)' : `acquired (expired, held by ${lease!.spec?.holderIdentity})`, this.lastRenew);
        return true;
      }
      case 'renew':
        if (!(await this.write(this.withSpec(lease!, { renewTime: now })))) return false;
        if (!this.leading) this.becomeLeader('still ours', this.lastRenew);
        return true;
      case 'wait':
        if (this.leading) await this.stepDown(`lease taken by ${d.holder}`);
        return false;
    }
  }

  private withSpec(l: V1Lease, spec: Partial<NonNullable<V1Lease['spec']>>): V1Lease {
    return { ...l, spec: { ...l.spec, ...spec } };
  }

  /** Replace with the resourceVersion read: true when written, false on a conflict. */
  private async write(l: V1Lease): Promise<boolean> {
    // The renewal counts from before it was sent: others count the lease's duration from when they
    // saw it change, which is after the server stored it, so the deadline errs on the safe side.
    const sentAt = this.now();
    try {
      this.lease = await this.o.coord.replaceNamespacedLease({ namespace: this.o.namespace, name: this.o.name, body: l });
      this.lastRenew = sentAt;
      return true;
    } catch (err) {
      if (apiStatus(err) === 409) {
        this.lease = undefined;
        return false;
      }
      throw err;
    }
  }

  private becomeLeader(how: string, renewedAt: number): void {
    this.leading = true;
    this.lastRenew = renewedAt;
    this.log(`lease ${this.o.namespace}/${this.o.name}: ${this.o.identity} is the leader (${how})`);
    this.o.onStartedLeading();
  }

  private async stepDown(reason: string): Promise<void> {
    if (!this.leading) return;
    this.leading = false;
    this.log(`lease ${this.o.namespace}/${this.o.name}: ${this.o.identity} stops leading (${reason})`);
    await this.o.onStoppedLeading(reason);
  }

  /** Hands the lease back (holder cleared) so another replica takes over at once. */
  private async release(): Promise<void> {
    const { coord, namespace, name } = this.o;
    try {
      const l = await coord.readNamespacedLease({ namespace, name });
      if (l.spec?.holderIdentity !== this.o.identity) return;
      const now = new V1MicroTime(this.now());
      const spec = { ...l.spec, leaseDurationSeconds: 1, renewTime: now, acquireTime: now };
      delete spec.holderIdentity;
      await coord.replaceNamespacedLease({ namespace, name, body: { ...l, spec } });
      this.log(`lease ${namespace}/${name}: released by ${this.o.identity}`);
    } catch (err) {
      this.log(`lease ${namespace}/${name}: release failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  private log(msg: string): void {
    this.o.log?.(msg, { kind: 'Lease', namespace: this.o.namespace, name: this.o.name });
  }
}
