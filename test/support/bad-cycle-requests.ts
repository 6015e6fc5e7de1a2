// One corpus of CycleNodeRequest specs, tested against zod (test/unit/admission-corpus.test.ts,
// which is also what the bridge and the cycle's resolve step use) and against the apiserver
// (test/bad-input/cycle-node-request.test.ts): each invalid spec is refused by both, naming the same
// field; each valid edge case is accepted by both.
import { NODE_GROUP_LABEL } from '../../api/node-groups.js';
import type { RefusedCase } from './bad-drain-rules.js';

const GROUP = 'it-adm';
/** A valid spec; each case changes one thing. */
export const cnr = (over: Record<string, unknown> = {}) => ({ nodeGroupName: GROUP, selector: { matchLabels: { [NODE_GROUP_LABEL]: GROUP } }, ...over });
const settings = (s: Record<string, unknown>) => cnr({ cycleSettings: s });
const check = (h: Record<string, unknown>) => cnr({ healthChecks: [{ endpoint: 'http://{{ .NodeIP }}:10256/healthz', waitPeriod: '1m', ...h }] });
const drain = (d: Record<string, unknown>) => cnr({ drain: d });
const BETWEEN = (min: string, max: string) => `must be a duration between ${min} and ${max}`;
const NOT_DURATION = 'is not a duration such as 90s, 5m, 1h30m or 250ms';

export const BAD_CYCLE_REQUESTS: RefusedCase[] = [
  // Durations: every one bounded, and parsed by one function.
  { name: 'cyclingTimeout 0s', spec: settings({ cyclingTimeout: '0s' }), field: 'spec.cycleSettings.cyclingTimeout', message: `"0s" ${BETWEEN('1m', '168h')}` },
  { name: 'cyclingTimeout 59s', spec: settings({ cyclingTimeout: '59s' }), field: 'spec.cycleSettings.cyclingTimeout', message: `"59s" ${BETWEEN('1m', '168h')}` },
  { name: 'cyclingTimeout 168h1s', spec: settings({ cyclingTimeout: '168h1s' }), field: 'spec.cycleSettings.cyclingTimeout', message: `"168h1s" ${BETWEEN('1m', '168h')}` },
  { name: 'cyclingTimeout 999999h', spec: settings({ cyclingTimeout: '999999h' }), field: 'spec.cycleSettings.cyclingTimeout', message: `"999999h" ${BETWEEN('1m', '168h')}` },
  { name: 'cyclingTimeout 99999999999h', spec: settings({ cyclingTimeout: '99999999999h' }), field: 'spec.cycleSettings.cyclingTimeout', message: { zod: `"99999999999h" ${NOT_DURATION}`, apiserver: 'Invalid value: "99999999999h"' } },
  { name: 'a negative cyclingTimeout', spec: settings({ cyclingTimeout: '-5m' }), field: 'spec.cycleSettings.cyclingTimeout', message: { zod: `"-5m" ${NOT_DURATION}`, apiserver: 'Invalid value: "-5m"' } },
  { name: 'cyclingTimeout in days', spec: settings({ cyclingTimeout: '1d' }), field: 'spec.cycleSettings.cyclingTimeout', message: { zod: `"1d" ${NOT_DURATION}`, apiserver: 'Invalid value: "1d"' } },
  { name: 'a cyclingTimeout of 21 characters', spec: settings({ cyclingTimeout: '1h1h1h1h1h1h1h1h1h1h1' }), field: 'spec.cycleSettings.cyclingTimeout', message: { zod: NOT_DURATION, apiserver: 'Too long' } },
  { name: 'a health check waitPeriod of 0s', spec: check({ waitPeriod: '0s' }), field: 'spec.healthChecks[0].waitPeriod', message: `"0s" ${BETWEEN('1s', '1h')}` },
  { name: 'a health check waitPeriod of 2h', spec: check({ waitPeriod: '2h' }), field: 'spec.healthChecks[0].waitPeriod', message: `"2h" ${BETWEEN('1s', '1h')}` },
  { name: 'a pre-termination waitPeriod of 500ms', spec: cnr({ preTerminationChecks: [{ triggerEndpoint: 'http://{{ .NodeIP }}/drain', healthCheck: { endpoint: 'http://{{ .NodeIP }}/ok', waitPeriod: '500ms' } }] }), field: 'spec.preTerminationChecks[0].healthCheck.waitPeriod', message: `"500ms" ${BETWEEN('1s', '1h')}` },
  { name: 'podEvictionTimeout.after 0s', spec: drain({ podEvictionTimeout: { after: '0s', policy: 'Delete' } }), field: 'spec.drain.podEvictionTimeout.after', message: `"0s" ${BETWEEN('1s', '168h')}` },
  { name: 'podEvictionTimeout.after 169h', spec: drain({ podEvictionTimeout: { after: '169h' } }), field: 'spec.drain.podEvictionTimeout.after', message: `"169h" ${BETWEEN('1s', '168h')}` },
  { name: 'volumeDetachTimeout 999ms', spec: drain({ volumeDetachTimeout: '999ms' }), field: 'spec.drain.volumeDetachTimeout', message: `"999ms" ${BETWEEN('1s', '168h')}` },
  { name: 'volumeDetachTimeout 10 (no unit)', spec: drain({ volumeDetachTimeout: '10' }), field: 'spec.drain.volumeDetachTimeout', message: { zod: `"10" ${NOT_DURATION}`, apiserver: 'Invalid value: "10"' } },
  // Label syntax.
  { name: 'labelsToRemove ["bad key!"]', spec: settings({ labelsToRemove: ['bad key!'] }), field: 'spec.cycleSettings.labelsToRemove[0]', message: '"bad key!"' },
  { name: 'an ignorePodsLabels key "bad key!"', spec: settings({ method: 'Wait', ignorePodsLabels: { 'bad key!': ['x'] } }), field: 'spec.cycleSettings.ignorePodsLabels[bad key!]', message: 'label key "bad key!" is not valid' },
  { name: 'an ignorePodsLabels value "-x"', spec: settings({ method: 'Wait', ignorePodsLabels: { app: ['-x'] } }), field: 'spec.cycleSettings.ignorePodsLabels.app[0]', message: '"-x"' },
  { name: 'an ignoreNamespaces entry "Bad_NS"', spec: settings({ method: 'Wait', ignoreNamespaces: ['Bad_NS'] }), field: 'spec.cycleSettings.ignoreNamespaces[0]', message: '"Bad_NS"' },
  { name: 'a selector key "bad key!"', spec: cnr({ selector: { matchLabels: { 'bad key!': 'x' } } }), field: 'spec.selector.matchLabels[bad key!]', message: 'label key "bad key!" is not valid' },
  { name: 'a selector value "a b"', spec: cnr({ selector: { matchLabels: { [NODE_GROUP_LABEL]: 'a b' } } }), field: `spec.selector.matchLabels[${NODE_GROUP_LABEL}]`, message: '"a b"' },
  { name: 'a selector expression In without values', spec: cnr({ selector: { matchExpressions: [{ key: 'pool', operator: 'In' }] } }), field: 'spec.selector.matchExpressions[0].values', message: 'operator In on "pool" needs values' },
  { name: 'an empty selector', spec: cnr({ selector: {} }), field: 'spec.selector', message: 'selector must not be empty: it would match every node' },
  { name: 'a drainPlan podSelector key "bad key!"', spec: drain({ drainPlan: [{ podSelector: { matchLabels: { 'bad key!': 'x' } } }] }), field: 'spec.drain.drainPlan[0].podSelector.matchLabels[bad key!]', message: 'label key "bad key!" is not valid' },
  { name: 'a nodeNames entry "Node_1"', spec: cnr({ nodeNames: ['Node_1'] }), field: 'spec.nodeNames[0]', message: '"Node_1"' },
  // Counts.
  { name: 'concurrency 0', spec: settings({ concurrency: 0 }), field: 'spec.cycleSettings.concurrency', message: { zod: '>=1', apiserver: 'greater than or equal to 1' } },
  { name: 'concurrency -1', spec: settings({ concurrency: -1 }), field: 'spec.cycleSettings.concurrency', message: { zod: '>=1', apiserver: 'greater than or equal to 1' } },
  { name: 'concurrency 1001', spec: settings({ concurrency: 1001 }), field: 'spec.cycleSettings.concurrency', message: '1000' },
  { name: 'concurrency 2^31', spec: settings({ concurrency: 2 ** 31 }), field: 'spec.cycleSettings.concurrency', message: { zod: '<=', apiserver: 'less than or equal to' } },
  { name: 'a fractional concurrency', spec: settings({ concurrency: 1.5 }), field: 'spec.cycleSettings.concurrency', message: { zod: 'expected int', apiserver: 'must be of type integer' } },
  { name: 'evictionConcurrency 0', spec: drain({ evictionConcurrency: 0 }), field: 'spec.drain.evictionConcurrency', message: { zod: '>=1', apiserver: 'greater than or equal to 1' } },
  { name: 'evictionQPS 0', spec: drain({ evictionQPS: 0 }), field: 'spec.drain.evictionQPS', message: { zod: '>0', apiserver: 'greater than 0' } },
  { name: 'a status code 99', spec: check({ validStatusCodes: [99] }), field: 'spec.healthChecks[0].validStatusCodes[0]', message: '100' },
  { name: 'a status code 600', spec: check({ validStatusCodes: [200, 600] }), field: 'spec.healthChecks[0].validStatusCodes[1]', message: '599' },
  // Health-check endpoints and regular expressions.
  { name: 'an endpoint that is not a URL', spec: check({ endpoint: 'not a url' }), field: 'spec.healthChecks[0].endpoint', message: '"not a url" is not an http or https URL' },
  { name: 'an ftp endpoint', spec: check({ endpoint: 'ftp://{{ .NodeIP }}/x' }), field: 'spec.healthChecks[0].endpoint', message: '"ftp://{{ .NodeIP }}/x" is not an http or https URL' },
  { name: 'an endpoint with port 65536', spec: check({ endpoint: 'http://{{ .NodeIP }}:65536/' }), field: 'spec.healthChecks[0].endpoint', message: 'is not an http or https URL' },
  { name: 'an endpoint without a host', spec: check({ endpoint: 'http:///healthz' }), field: 'spec.healthChecks[0].endpoint', message: 'is not an http or https URL' },
  { name: 'an endpoint with a space in its path', spec: check({ endpoint: 'http://{{ .NodeIP }}/health z' }), field: 'spec.healthChecks[0].endpoint', message: 'is not an http or https URL' },
  { name: 'an endpoint with "<" in its host', spec: check({ endpoint: 'http://ho<st/' }), field: 'spec.healthChecks[0].endpoint', message: 'is not an http or https URL' },
  { name: 'a misspelt placeholder', spec: check({ endpoint: 'http://{{ .NodeIp }}/healthz' }), field: 'spec.healthChecks[0].endpoint', message: 'is not an http or https URL' },
  { name: 'a trigger endpoint that is not a URL', spec: cnr({ preTerminationChecks: [{ triggerEndpoint: 'drain-now', healthCheck: { endpoint: 'http://{{ .NodeIP }}/ok', waitPeriod: '1m' } }] }), field: 'spec.preTerminationChecks[0].triggerEndpoint', message: '"drain-now" is not an http or https URL' },
  { name: 'a regexMatch that does not compile', spec: check({ regexMatch: '([' }), field: 'spec.healthChecks[0].regexMatch', message: { zod: '"([" is not a regular expression', apiserver: 'missing closing ]' } },
  { name: 'a regexMatch with a lookahead', spec: check({ regexMatch: '^(?=ok)' }), field: 'spec.healthChecks[0].regexMatch', message: '"^(?=ok)" is not a regular expression valid in both JavaScript and RE2' },
  { name: 'a regexMatch with a backreference', spec: check({ regexMatch: '(a)\\1' }), field: 'spec.healthChecks[0].regexMatch', message: 'is not a regular expression valid in both JavaScript and RE2' },
  { name: 'a regexMatch with an inline flag', spec: check({ regexMatch: '(?i)ok' }), field: 'spec.healthChecks[0].regexMatch', message: '"(?i)ok" is not a regular expression valid in both JavaScript and RE2' },
  // Names and enums.
  { name: 'no node group', spec: cnr({ nodeGroupName: '' }), field: 'spec.nodeGroupName', message: 'name at least one node group (nodeGroupName or nodeGroupsList)' },
  { name: 'an empty nodeGroupsList entry', spec: cnr({ nodeGroupsList: [''] }), field: 'spec.nodeGroupsList[0]', message: { zod: '>=1', apiserver: 'at least 1 chars long' } },
  { name: 'an unknown method', spec: settings({ method: 'Evict' }), field: 'spec.cycleSettings.method', message: 'Unsupported value: "Evict": supported values: "Drain", "Wait"' },
  { name: 'an unknown provider', spec: cnr({ provider: 'gce' }), field: 'spec.provider', message: 'Unsupported value: "gce": supported values: "kwok", "aws"' },
  { name: 'an unknown eviction timeout policy', spec: drain({ podEvictionTimeout: { after: '1m', policy: 'Force' } }), field: 'spec.drain.podEvictionTimeout.policy', message: 'Unsupported value: "Force": supported values: "Wait", "Fail", "Delete"' },
  { name: 'an unknown podType', spec: drain({ drainPlan: [{ podType: 'Job' }] }), field: 'spec.drain.drainPlan[0].podType', message: 'Unsupported value: "Job"' },
];

/** Accepted by both. */
export const VALID_CYCLE_REQUESTS: Array<{ name: string; spec: unknown }> = [
  { name: 'the smallest and largest cyclingTimeout', spec: settings({ cyclingTimeout: '1m' }) },
  { name: 'cyclingTimeout 168h', spec: settings({ cyclingTimeout: '168h', concurrency: 1000 }) },
  { name: 'a compound cyclingTimeout and concurrency 1', spec: settings({ cyclingTimeout: '1h30m', concurrency: 1, labelsToRemove: ['example.com/team', 'app'] }) },
  { name: 'fractional durations at the bounds', spec: check({ waitPeriod: '0.5h', validStatusCodes: [100, 599] }) },
  { name: 'waitPeriod 1s, https, an IPv6 host and the compact placeholder', spec: check({ endpoint: 'https://[::1]:8443/x?node={{.NodeIP}}', waitPeriod: '1000ms', regexMatch: '^(ok|ready)\\s*$' }) },
  { name: 'a host name endpoint with a query', spec: check({ endpoint: 'http://health.example.com/check?node={{ .NodeIP }}&x=1', waitPeriod: '1h' }) },
  { name: 'a regexMatch with named and non-capturing groups', spec: check({ regexMatch: '(?<state>ok)|(?:ready)+' }) },
  { name: 'drain timeouts at the bounds', spec: drain({ podEvictionTimeout: { after: '1s', policy: 'Fail' }, volumeDetachTimeout: '168h', evictionConcurrency: 200, evictionQPS: 0.5 }) },
  { name: 'Wait settings', spec: settings({ method: 'Wait', ignorePodsLabels: { 'example.com/batch': ['true', ''] }, ignoreNamespaces: ['kube-system'] }) },
  { name: 'node names and more groups', spec: cnr({ nodeNames: ['ip-10-0-0-1.ec2.internal'], nodeGroupsList: ['other-group'], provider: 'kwok' }) },
];
