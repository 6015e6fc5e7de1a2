// Bad Evacuations: each refused at admission naming its field exactly
// (test/bad-input/evacuation.test.ts, against the apiserver; the #24.10 unit test, against the
// generated CRD). The specs name pod "it-adm-pod" (uid "it-adm-uid") and node "it-adm-node"; the
// bad-input test aims them at a guard pod. `message` is what the apiserver says.
import type { RefusedCase } from './bad-drain-rules.js';

/** A valid Evacuation of the pod (named by its uid, as Slipway names them). */
export const evacuation = (): Record<string, any> => ({
  podRef: { name: 'it-adm-pod', uid: 'it-adm-uid' },
  requesters: [{ name: 'drain/it-adm-node', reason: 'bad-input' }],
  progressDeadlineSeconds: 60,
  evacuators: [{ name: 'db-operator', priority: 10 }],
});
const changed = (change: (s: Record<string, any>) => void) => {
  const s = evacuation();
  change(s);
  return s;
};

export const BAD_EVACUATIONS: RefusedCase[] = [
  { name: 'no spec.podRef', spec: changed((s) => delete s.podRef), field: 'spec.podRef', message: 'Required value' },
  { name: 'an empty spec.podRef.uid', spec: changed((s) => (s.podRef.uid = '')), field: 'spec.podRef.uid', message: 'at least 1 chars long' },
  { name: 'spec.progressDeadlineSeconds below 10 s', spec: changed((s) => (s.progressDeadlineSeconds = 5)), field: 'spec.progressDeadlineSeconds', message: 'greater than or equal to 10' },
  { name: 'spec.progressDeadlineSeconds above 6 h', spec: changed((s) => (s.progressDeadlineSeconds = 86_400)), field: 'spec.progressDeadlineSeconds', message: 'less than or equal to 21600' },
  { name: 'an evacuator name that is not a label value', spec: changed((s) => (s.evacuators[0].name = '-db operator-')), field: 'spec.evacuators[0].name', message: 'should match' },
  { name: 'an evacuator priority above 100000', spec: changed((s) => (s.evacuators[0].priority = 100_001)), field: 'spec.evacuators[0].priority', message: 'less than or equal to 100000' },
  { name: 'a negative evacuator priority', spec: changed((s) => (s.evacuators[0].priority = -1)), field: 'spec.evacuators[0].priority', message: 'greater than or equal to 0' },
  { name: 'two evacuators of one name', spec: changed((s) => s.evacuators.push({ name: 'db-operator', priority: 5 })), field: 'spec.evacuators[1]', message: 'Duplicate value' },
  { name: 'two requesters of one name', spec: changed((s) => s.requesters.push({ name: s.requesters[0].name })), field: 'spec.requesters[1]', message: 'Duplicate value' },
  { name: 'an empty requester name', spec: changed((s) => (s.requesters[0].name = '')), field: 'spec.requesters[0].name', message: 'at least 1 chars long' },
  { name: 'more than 64 requesters', spec: changed((s) => (s.requesters = Array.from({ length: 65 }, (_, i) => ({ name: `drain/n${i}` })))), field: 'spec.requesters', message: 'must have at most 64 items' },
];
