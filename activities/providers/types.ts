// A cloud node group behind a small interface (after Cyclops's CloudProvider): describe the
// groups, detach an instance without shrinking the group (so the group launches a replacement:
// surge first), attach one back, terminate one. A second provider is a new file, not a fork.
// Every method is idempotent: it reports "already" instead of failing when the work is done.

export type InstanceLifecycle = 'Pending' | 'InService' | 'Terminating' | 'Detaching' | 'Other';

export interface GroupInstance {
  /** The Node's spec.providerID for this instance (aws:///<zone>/<id>, kwok://<node>). */
  providerID: string;
  group: string;
  lifecycle: InstanceLifecycle;
}

export interface NodeGroupDescription {
  name: string;
  /** Instances currently in the group (detached ones are not). */
  instances: GroupInstance[];
  desiredCapacity: number;
}

/** An instance that no longer matches its group's launch template, and how. */
export interface DriftedInstance {
  providerID: string;
  reason: string;
}

export interface NodeGroupProvider {
  readonly name: 'kwok' | 'aws';
  /** Describes the named groups; a name that does not exist is an error naming it (UnknownNodeGroupError). */
  describeGroups(names: string[]): Promise<NodeGroupDescription[]>;
  /** Removes the instance from its group without decrementing the desired capacity, so the group replaces it. */
  detachInstance(providerID: string, group: string): Promise<{ alreadyDetached: boolean }>;
  /** Puts an instance back into a group (healing, or an earlier run that left it detached). */
  attachInstance(providerID: string, group: string): Promise<{ alreadyAttached: boolean }>;
  /** Terminates the instance (it is no longer in a group). Gone already counts as done. */
  terminateInstance(providerID: string): Promise<{ alreadyGone: boolean }>;
  /** Which of these instances still exist (not terminated). */
  instancesExist(providerIDs: string[]): Promise<Set<string>>;
  /** The group's instances launched from another template than the group's now (the drift observer's question). */
  driftedInstances(group: string): Promise<DriftedInstance[]>;
}

export class UnknownNodeGroupError extends Error {
  constructor(readonly groups: string[], provider: string) {
    super(`unknown node group${groups.length > 1 ? 's' : ''} ${groups.join(', ')} (provider ${provider})`);
    this.name = 'UnknownNodeGroupError';
  }
}
