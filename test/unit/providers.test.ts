import { asgLifecycle, isAlreadyAttachedError, isAlreadyDetachedError, isInstanceGoneError } from '../../activities/providers/aws.js';
import { createProviders, defaultProviderName } from '../../activities/providers/index.js';
import { nodeNameFromKwokProviderID, replacementNodeName } from '../../activities/providers/kwok.js';
import type { Kube } from '../../kube/client.js';

const awsError = (name: string, message: string) => Object.assign(new Error(message), { name });

describe('Auto Scaling lifecycle mapping', () => {
  test.each([
    ['InService', 'InService'],
    ['Pending', 'Pending'],
    ['Pending:Wait', 'Pending'],
    ['Pending:Proceed', 'Pending'],
    ['Terminating', 'Terminating'],
    ['Terminating:Wait', 'Terminating'],
    ['Terminating:Proceed', 'Terminating'],
    ['Detaching', 'Detaching'],
    ['Standby', 'Other'],
    ['Warmed:Running', 'Other'],
    [undefined, 'Other'],
  ])('%s → %s', (state, expected) => {
    expect(asgLifecycle(state)).toBe(expected);
  });
});

describe('AWS error classification', () => {
  test('DetachInstances: leaving or gone from the group counts as detached', () => {
    expect(isAlreadyDetachedError(awsError('ValidationError', 'The instance i-0263750092e99150a is not in InService or Standby.'))).toBe(true);
    expect(isAlreadyDetachedError(awsError('ValidationError', 'The instance i-000 is not part of Auto Scaling group my-asg.'))).toBe(true);
    expect(isAlreadyDetachedError(awsError('ValidationError', 'AutoScalingGroup name not found - null'))).toBe(false);
    expect(isAlreadyDetachedError(awsError('Throttling', 'The instance i-000 is not part of Auto Scaling group x.'))).toBe(false);
  });

  test('AttachInstances: already a member, or not attachable now', () => {
    expect(isAlreadyAttachedError(awsError('ValidationError', 'The instance i-1 is already part of AutoScalingGroup: my-asg'))).toBe(true);
    expect(isAlreadyAttachedError(awsError('ValidationError', 'Instance i-1 is not in correct state'))).toBe(true);
    expect(
      isAlreadyAttachedError(awsError('ValidationError', 'AutoScalingGroup g has min-size=3, max-size=4, and desired-size=4. To attach 1 instance, please update the AutoScalingGroup sizes appropriately.')),
    ).toBe(false);
  });

  test('TerminateInstances: an unknown instance is gone; anything else is not', () => {
    expect(isInstanceGoneError(awsError('InvalidInstanceID.NotFound', "The instance ID 'i-1' does not exist"))).toBe(true);
    expect(isInstanceGoneError(awsError('InvalidInstanceID.Malformed', 'Invalid id'))).toBe(false);
    expect(isInstanceGoneError('InvalidInstanceID.NotFound')).toBe(false);
  });
});

describe('kwok provider helpers', () => {
  test('the replacement name is deterministic per detached node and differs by uid', () => {
    const a = replacementNodeName('workers', 'workers-0', 'uid-1');
    expect(a).toMatch(/^workers-[0-9a-f]{8}$/);
    expect(replacementNodeName('workers', 'workers-0', 'uid-1')).toBe(a);
    expect(replacementNodeName('workers', 'workers-0', 'uid-2')).not.toBe(a);
    expect(replacementNodeName('workers', 'workers-1', 'uid-1')).not.toBe(a);
  });

  test('the replacement name stays a valid hostname label value for long group names', () => {
    const group = `${'a'.repeat(53)}-bbbbbbbb`;
    const name = replacementNodeName(group, 'n', 'u');
    expect(name.length).toBeLessThanOrEqual(63);
    expect(name).toMatch(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
  });

  test('providerIDs: kwok://<node> only', () => {
    expect(nodeNameFromKwokProviderID('kwok://workers-0')).toBe('workers-0');
    expect(() => nodeNameFromKwokProviderID('aws:///us-east-1a/i-1')).toThrow(expect.objectContaining({ name: 'InvalidProviderIDError' }));
    expect(() => nodeNameFromKwokProviderID('kwok://')).toThrow();
  });
});

describe('provider selection', () => {
  test('SLIPWAY_PROVIDER, kwok by default, unknown names refused', () => {
    expect(defaultProviderName({})).toBe('kwok');
    expect(defaultProviderName({ SLIPWAY_PROVIDER: '' })).toBe('kwok');
    expect(defaultProviderName({ SLIPWAY_PROVIDER: 'aws' })).toBe('aws');
    expect(() => defaultProviderName({ SLIPWAY_PROVIDER: 'gcp' })).toThrow(/gcp/);
  });

  test('the AWS provider is loaded and built on its first call, and a failed build is retried', async () => {
    let built = 0;
    const providers = createProviders({
      kube: {} as Kube,
      aws: () => {
        built++;
        throw new Error('no AWS settings');
      },
    });
    expect(providers.kwok.name).toBe('kwok');
    expect(providers.aws.name).toBe('aws');
    expect(built).toBe(0);
    await expect(providers.aws.describeGroups(['g'])).rejects.toThrow('no AWS settings');
    expect(built).toBe(1);
    await expect(providers.aws.instancesExist(['aws:///us-east-1a/i-1'])).rejects.toThrow('no AWS settings');
    expect(built).toBe(2);
  });
});
