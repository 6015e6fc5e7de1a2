import { summarizeNode } from '../../activities/inventory.js';
import { fakeNode } from '../../activities/providers/kwok-node.js';

test('a node summary reads group, readiness and cordon from the Node', () => {
  const n = fakeNode({ name: 'a-0', nodeGroup: 'a' });
  expect(summarizeNode(n)).toEqual({ name: 'a-0', nodeGroup: 'a', providerID: 'kwok://a-0', ready: false, cordoned: false });
  n.spec!.unschedulable = true;
  n.status!.conditions = [{ type: 'Ready', status: 'True' }];
  expect(summarizeNode(n)).toMatchObject({ ready: true, cordoned: true });
});

test('fake nodes carry the labels the providers and the scheduler rely on', () => {
  const n = fakeNode({ name: 'b-1', nodeGroup: 'b', zone: 'eu-west-1c', instanceType: 'c5.xlarge', providerID: 'aws:///eu-west-1c/i-9' });
  expect(n.metadata!.labels).toMatchObject({
    'slipway.dev/node-group': 'b',
    'topology.kubernetes.io/zone': 'eu-west-1c',
    'topology.kubernetes.io/region': 'eu-west-1',
    'node.kubernetes.io/instance-type': 'c5.xlarge',
  });
  expect(n.metadata!.annotations!['kwok.x-k8s.io/node']).toBe('fake');
  expect(n.spec!.providerID).toBe('aws:///eu-west-1c/i-9');
});
