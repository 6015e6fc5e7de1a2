// What the rollout's completion watch counts as a node's work done (activities/maintenance/rollout.ts
// workDone, nodeFacts), on Node objects as the apiserver gives them. Named after docs/rolling-maintenance.md.
import type { V1Node } from '@kubernetes/client-node';
import { ROLLOUT_DONE_ANNOTATION } from '../../api/rollout.js';
import { nodeFacts, workDone } from '../../activities/maintenance/rollout.js';

const node = (bootID: string, ready: boolean, annotations: Record<string, string> = {}): V1Node => ({
  metadata: { name: 'n1', uid: 'u1', annotations },
  status: { nodeInfo: { bootID } as never, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }], addresses: [{ type: 'InternalIP', address: '10.1.2.3' }] },
});
const watch = { node: 'n1', maintenance: 'kernel', bootID: 'b1', reboot: true, annotation: true };

test('RM-3.1 the facts recorded before the work: bootID, uid, InternalIP, Ready', () => {
  expect(nodeFacts(node('b1', true))).toEqual({ exists: true, ready: true, bootID: 'b1', uid: 'u1', internalIP: '10.1.2.3' });
  expect(nodeFacts(undefined)).toEqual({ exists: false, ready: false });
});

test('RM-3.2 reboot: a bootID other than the recorded one, and Ready; not before Ready, not an empty bootID, not without a recorded one', () => {
  expect(workDone(node('b1', true), watch)).toBeUndefined();
  expect(workDone(node('b2', false), watch)).toBeUndefined();
  expect(workDone(node('', true), watch)).toBeUndefined();
  expect(workDone(node('b2', true), watch)).toBe('reboot');
  expect(workDone(node('b2', true), { ...watch, bootID: undefined })).toBeUndefined();
  expect(workDone(node('b2', true), { ...watch, reboot: false })).toBeUndefined();
});

test('RM-3.3 annotation: only the done annotation naming this maintenance, and only when that method is asked', () => {
  expect(workDone(node('b1', true, { [ROLLOUT_DONE_ANNOTATION]: 'other' }), watch)).toBeUndefined();
  expect(workDone(node('b1', true, { [ROLLOUT_DONE_ANNOTATION]: 'kernel' }), watch)).toBe('annotation');
  expect(workDone(node('b1', true, { [ROLLOUT_DONE_ANNOTATION]: 'kernel' }), { ...watch, annotation: false })).toBeUndefined();
});

test('RM-2.4 a deleted node ends the wait', () => {
  expect(workDone(undefined, watch)).toBe('gone');
});

test('RM-3.2 a Node deleted and re-created under the same name (another uid) is no reboot: the node drained is replaced', () => {
  const again: V1Node = { ...node('b2', true), metadata: { name: 'n1', uid: 'u2', annotations: {} } };
  expect(workDone(again, { ...watch, uid: 'u1' })).toBe('replaced');
  expect(workDone(node('b2', true), { ...watch, uid: 'u1' })).toBe('reboot');
});
