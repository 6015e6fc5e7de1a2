import { instanceIdFromProviderID, providerIDFor } from '../../activities/providers/aws-provider-id.js';
import { planNodeSync } from '../../stack/aws/sync-plan.js';

const inService = (id: string, group = 'g') => ({ instanceId: id, groupName: group, lifecycleState: 'InService', zone: 'us-east-1a' });

describe('AWS node sync plan', () => {
  test('an InService, running instance without a Node gets one named after its private DNS name', () => {
    const plan = planNodeSync([inService('i-1')], [{ instanceId: 'i-1', state: 'running', privateDnsName: 'ip-10-0-0-1.ec2.internal' }], []);
    expect(plan).toEqual({ create: [{ name: 'ip-10-0-0-1.ec2.internal', instanceId: 'i-1', groupName: 'g', zone: 'us-east-1a' }], delete: [] });
  });

  test('an instance still launching (Pending lifecycle or pending EC2 state) gets no Node yet', () => {
    const plan = planNodeSync(
      [{ ...inService('i-1'), lifecycleState: 'Pending' }, inService('i-2')],
      [{ instanceId: 'i-1', state: 'running' }, { instanceId: 'i-2', state: 'pending' }],
      [],
    );
    expect(plan.create).toEqual([]);
  });

  test('a terminated or vanished instance loses its Node; a detached but running one keeps it', () => {
    const plan = planNodeSync(
      [],
      [{ instanceId: 'i-1', state: 'terminated' }, { instanceId: 'i-3', state: 'running' }],
      [{ name: 'n1', instanceId: 'i-1' }, { name: 'n2', instanceId: 'i-2' }, { name: 'n3', instanceId: 'i-3' }],
    );
    expect(plan).toEqual({ create: [], delete: ['n1', 'n2'] });
  });

  test('an instance that already has a Node is left alone', () => {
    expect(planNodeSync([inService('i-1')], [{ instanceId: 'i-1', state: 'running' }], [{ name: 'x', instanceId: 'i-1' }])).toEqual({ create: [], delete: [] });
  });

  test('providerIDs round-trip and foreign ones are not parsed', () => {
    expect(instanceIdFromProviderID(providerIDFor('us-east-1b', 'i-0abc'))).toBe('i-0abc');
    expect(instanceIdFromProviderID('kwok://node-1')).toBeUndefined();
    expect(instanceIdFromProviderID(undefined)).toBeUndefined();
  });
});
