// The AWS provider: node groups are Auto Scaling groups, instances are EC2 instances. Every write is
// preceded by a read of the group, because moto answers most "already" cases with silent success
// (a second AttachInstances even lists the instance twice) and an unknown group with an HTTP 500;
// the error-wording checks cover real AWS, and only count when a fresh read agrees.
import {
  AttachInstancesCommand,
  DescribeAutoScalingInstancesCommand,
  DetachInstancesCommand,
  SetDesiredCapacityCommand,
  paginateDescribeAutoScalingGroups,
  type AutoScalingGroup,
} from '@aws-sdk/client-auto-scaling';
import { TerminateInstancesCommand, paginateDescribeInstances } from '@aws-sdk/client-ec2';
import type { Aws } from '../aws.js';
import { instanceIdFromProviderID, providerIDFor } from './aws-provider-id.js';
import { awsDriftedInstances } from './aws-drift.js';
import { UnknownNodeGroupError, type InstanceLifecycle, type NodeGroupDescription, type NodeGroupProvider } from './types.js';

function namedError(name: string, message: string): Error {
  const err = new Error(message);
  err.name = name;
  return err;
}

function instanceIdOf(providerID: string): string {
  const id = instanceIdFromProviderID(providerID);
  if (!id) throw namedError('InvalidProviderIDError', `not an aws providerID: ${providerID}`);
  return id;
}

/** Auto Scaling's LifecycleState → the provider-neutral lifecycle. */
export function asgLifecycle(state: string | undefined): InstanceLifecycle {
  if (state === 'InService') return 'InService';
  if (state?.startsWith('Pending')) return 'Pending';
  if (state?.startsWith('Terminating')) return 'Terminating';
  if (state === 'Detaching') return 'Detaching';
  return 'Other';
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : '');
const isValidation = (err: unknown) => err instanceof Error && err.name === 'ValidationError';

/** Real AWS's DetachInstances answers for an instance that is leaving or has left the group. */
export function isAlreadyDetachedError(err: unknown): boolean {
  return isValidation(err) && /is not in InService or Standby|is not part of (the )?Auto ?Scaling ?group/i.test(messageOf(err));
}

/** Real AWS's AttachInstances answers that may mean "already attached" (confirmed by a read). */
export function isAlreadyAttachedError(err: unknown): boolean {
  return isValidation(err) && /is already part of|is not in correct state/i.test(messageOf(err));
}

/** EC2's answer for an instance it no longer knows (terminated long ago, or never existed). */
export function isInstanceGoneError(err: unknown): boolean {
  return err instanceof Error && err.name === 'InvalidInstanceID.NotFound';
}

/** Detaching these would fail; they are leaving anyway, so the detach is done. */
const DETACHABLE = new Set(['InService', 'Standby']);
/** Still arriving: retry later rather than call it detached. */
const ARRIVING = /^(Pending|EnteringStandby)/;
const GONE_STATES = new Set(['shutting-down', 'terminated']);

async function describeAsgs(aws: Aws, names: string[]): Promise<Map<string, AutoScalingGroup>> {
  const found = new Map<string, AutoScalingGroup>();
  // An empty name list would describe every group in the account.
  for (let i = 0; i < names.length; i += 50) {
    const chunk = names.slice(i, i + 50);
    for await (const page of paginateDescribeAutoScalingGroups({ client: aws.autoscaling, pageSize: 100 }, { AutoScalingGroupNames: chunk })) {
      for (const g of page.AutoScalingGroups ?? []) found.set(g.AutoScalingGroupName!, g);
    }
  }
  const missing = names.filter((n) => !found.has(n));
  if (missing.length > 0) throw new UnknownNodeGroupError(missing, 'aws');
  return found;
}

async function describeAsg(aws: Aws, name: string): Promise<AutoScalingGroup> {
  return (await describeAsgs(aws, [name])).get(name)!;
}

/** The instance's lifecycle state in this group, or undefined when it is not a member. */
const stateIn = (g: AutoScalingGroup, instanceId: string) => g.Instances?.find((i) => i.InstanceId === instanceId)?.LifecycleState;

/** EC2 states of the given instances, by a filter so one unknown ID does not fail the whole call. */
async function ec2States(aws: Aws, instanceIds: string[]): Promise<Map<string, string>> {
  const states = new Map<string, string>();
  for (let i = 0; i < instanceIds.length; i += 100) {
    const chunk = instanceIds.slice(i, i + 100);
    for await (const page of paginateDescribeInstances({ client: aws.ec2 }, { Filters: [{ Name: 'instance-id', Values: chunk }] })) {
      for (const r of page.Reservations ?? []) {
        for (const inst of r.Instances ?? []) states.set(inst.InstanceId!, inst.State?.Name ?? 'unknown');
      }
    }
  }
  return states;
}

/**
 * Sets a group's desired capacity, e.g. back to its old value after attachInstance raised it during
 * healing. Not part of the provider interface: only Auto Scaling ties attaching to capacity.
 */
export async function setDesiredCapacity(aws: Aws, group: string, desiredCapacity: number): Promise<void> {
  await describeAsg(aws, group); // UnknownNodeGroupError rather than moto's 500
  await aws.autoscaling.send(new SetDesiredCapacityCommand({ AutoScalingGroupName: group, DesiredCapacity: desiredCapacity, HonorCooldown: false }));
}

export function createAwsProvider(aws: Aws): NodeGroupProvider {
  return {
    name: 'aws',

    async describeGroups(names) {
      const wanted = [...new Set(names)];
      if (wanted.length === 0) return [];
      const groups = await describeAsgs(aws, wanted);
      return wanted.map((name): NodeGroupDescription => {
        const g = groups.get(name)!;
        return {
          name,
          desiredCapacity: g.DesiredCapacity ?? 0,
          instances: (g.Instances ?? [])
            .map((i) => ({ providerID: providerIDFor(i.AvailabilityZone ?? '', i.InstanceId!), group: name, lifecycle: asgLifecycle(i.LifecycleState) }))
            .sort((a, b) => a.providerID.localeCompare(b.providerID)),
        };
      });
    },

    async detachInstance(providerID, group) {
      const id = instanceIdOf(providerID);
      const state = stateIn(await describeAsg(aws, group), id);
      if (state === undefined || (!DETACHABLE.has(state) && !ARRIVING.test(state))) return { alreadyDetached: true };
      if (ARRIVING.test(state)) throw namedError('InstanceNotReadyError', `instance ${id} is ${state} in ${group}; detach it once InService`);
      try {
        // One instance per call, no decrement: the group launches the replacement (AWS later, moto now).
        const out = await aws.autoscaling.send(
          new DetachInstancesCommand({ AutoScalingGroupName: group, InstanceIds: [id], ShouldDecrementDesiredCapacity: false }),
        );
        // moto detaches a non-member silently with no activity: someone else got there first.
        return { alreadyDetached: (out.Activities?.length ?? 0) === 0 };
      } catch (err) {
        if (isAlreadyDetachedError(err)) {
          const now = stateIn(await describeAsg(aws, group), id);
          if (now === undefined || !DETACHABLE.has(now)) return { alreadyDetached: true };
        }
        throw err;
      }
    },

    async attachInstance(providerID, group) {
      const id = instanceIdOf(providerID);
      const state = stateIn(await describeAsg(aws, group), id);
      if (state === 'Detaching') throw namedError('InstanceNotReadyError', `instance ${id} is still Detaching from ${group}`);
      if (state !== undefined) return { alreadyAttached: true };
      // AWS refuses these with an error; moto would attach anyway (to two groups, or a dead instance).
      const membership = await aws.autoscaling.send(new DescribeAutoScalingInstancesCommand({ InstanceIds: [id] }));
      const other = membership.AutoScalingInstances?.find((i) => i.AutoScalingGroupName !== group)?.AutoScalingGroupName;
      if (other) throw namedError('InstanceInOtherGroupError', `instance ${id} is in Auto Scaling group ${other}, not ${group}`);
      const ec2State = (await ec2States(aws, [id])).get(id);
      if (ec2State === 'pending') throw namedError('InstanceNotReadyError', `instance ${id} is still pending`);
      if (ec2State !== 'running') throw namedError('InstanceNotRunningError', `instance ${id} is ${ec2State ?? 'unknown to EC2'}; only running instances can be attached`);
      try {
        await aws.autoscaling.send(new AttachInstancesCommand({ AutoScalingGroupName: group, InstanceIds: [id] }));
        return { alreadyAttached: false };
      } catch (err) {
        if (isAlreadyAttachedError(err) && stateIn(await describeAsg(aws, group), id) !== undefined) return { alreadyAttached: true };
        throw err;
      }
    },

    async terminateInstance(providerID) {
      const id = instanceIdOf(providerID);
      try {
        const out = await aws.ec2.send(new TerminateInstancesCommand({ InstanceIds: [id] }));
        const previous = out.TerminatingInstances?.find((t) => t.InstanceId === id)?.PreviousState?.Name;
        return { alreadyGone: previous !== undefined && GONE_STATES.has(previous) };
      } catch (err) {
        if (isInstanceGoneError(err)) return { alreadyGone: true };
        throw err;
      }
    },

    async instancesExist(providerIDs) {
      const byId = new Map<string, string[]>();
      for (const p of providerIDs) {
        const id = instanceIdFromProviderID(p);
        if (id) byId.set(id, [...(byId.get(id) ?? []), p]);
      }
      if (byId.size === 0) return new Set();
      const states = await ec2States(aws, [...byId.keys()]);
      const live = new Set<string>();
      for (const [id, ps] of byId) {
        const s = states.get(id);
        if (s !== undefined && !GONE_STATES.has(s)) ps.forEach((p) => live.add(p));
      }
      return live;
    },

    async driftedInstances(group) {
      return awsDriftedInstances(aws, await describeAsg(aws, group));
    },
  };
}
