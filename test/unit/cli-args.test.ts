// The CLI's command line, parsed before anything connects: what is accepted, what is refused and
// with which words; references (requests, nodes, drain IDs) and the workflow IDs they map to.
import type { V1Pod } from '@kubernetes/client-node';
import { parseCommand, type Command } from '../../starter/cli/args.js';
import { usage } from '../../starter/cli/help.js';
import { run } from '../../starter/cli/main.js';
import { UsageError } from '../../starter/cli/errors.js';
import { podsLeft } from '../../starter/cli/pods.js';
import { parseRef } from '../../starter/cli/refs.js';
import { cycleWorkflowId, drainIdFor, drainWorkflowId, nodeCycleWorkflowId, nodeDrainWorkflowId, parseWorkflowId } from '../../workflows/ids.js';

const parse = (line: string): Command => parseCommand(line.split(' ').filter(Boolean));
const refusal = (line: string): string => {
  try {
    parse(line);
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return (err as Error).message;
  }
  throw new Error(`"${line}" was accepted`);
};

describe('cycle', () => {
  test('-n and --namespace both set the namespace (the request never falls back to default)', () => {
    expect(parse('cycle workers -n team-a')).toMatchObject({ cmd: 'cycle', nodeGroup: 'workers', namespace: 'team-a' });
    expect(parse('cycle workers --namespace team-a')).toMatchObject({ namespace: 'team-a' });
    expect(parse('cycle -n team-a workers')).toMatchObject({ nodeGroup: 'workers', namespace: 'team-a' });
    expect(parse('cycle workers')).toMatchObject({ namespace: 'default', namespaceSet: false, follow: true, dryRun: false });
    expect(parse('cycle workers -n default')).toMatchObject({ namespace: 'default', namespaceSet: true });
  });

  test('reads every option', () => {
    expect(parse('cycle workers --nodes a,b --concurrency 2 --method Wait --provider aws --name r1 --dry-run --no-follow')).toEqual({
      cmd: 'cycle',
      nodeGroup: 'workers',
      namespace: 'default',
      namespaceSet: false,
      name: 'r1',
      nodes: ['a', 'b'],
      concurrency: 2,
      method: 'Wait',
      provider: 'aws',
      dryRun: true,
      follow: false,
    });
  });

  test.each([
    ['cycle workers --concurrency two', '--concurrency must be a positive integer, got "two"'],
    ['cycle workers --concurrency 0', '--concurrency must be a positive integer'],
    ['cycle workers --concurrency 1.5', '--concurrency must be a positive integer'],
    ['cycle workers --concurrency', 'option --concurrency needs a value'],
    ['cycle workers -n', 'option --namespace needs a value'],
    ['cycle workers --concurrency -1', 'option --concurrency needs a value'],
    ['cycle workers -n Team_A', '"Team_A" is not a valid namespace'],
    ['cycle workers --method drain', '--method must be Drain or Wait'],
    ['cycle workers --provider gcp', '--provider must be kwok or aws'],
    ['cycle workers --nodes a,,b', 'is not a valid node name in --nodes'],
    ['cycle workers --dry-run=yes', 'option --dry-run takes no value'],
    ['cycle workers --concurency 2', 'unknown option --concurency for cycle (did you mean --concurrency?)'],
    ['cycle', 'cycle needs <node-group>'],
    ['cycle a b', 'unexpected argument "b" for cycle'],
  ])('refuses %s', (line, message) => {
    expect(refusal(line)).toContain(message);
  });
});

describe('drain', () => {
  test('takes a node and --again', () => {
    expect(parse('drain node-1')).toEqual({ cmd: 'drain', node: 'node-1', again: false, follow: true });
    expect(parse('drain node-1 --again --no-follow')).toEqual({ cmd: 'drain', node: 'node-1', again: true, follow: false });
  });

  test('never takes an option for a node name', () => {
    expect(refusal('drain --node X')).toBe('unknown option --node for drain');
    expect(() => parseCommand(['drain', '--', '--node'])).toThrow('"--node" is not a valid node name');
    expect(refusal('drain')).toBe('drain needs <node>');
  });
});

describe('inventory', () => {
  test('a mistyped option is refused, not ignored', () => {
    expect(refusal('inventory --selectr a=b')).toBe('unknown option --selectr for inventory (did you mean --selector?)');
    expect(parse('inventory --selector a=b')).toEqual({ cmd: 'inventory', selector: 'a=b' });
  });
});

describe('help', () => {
  test.each(['--help', '-h', 'help'])('%s is help for everything', (line) => {
    expect(parse(line)).toEqual({ cmd: 'help' });
  });

  test.each(['drain --help', 'drain -h', 'help drain', 'drain node-1 --help'])('%s is help for drain', (line) => {
    expect(parse(line)).toEqual({ cmd: 'help', topic: 'drain' });
  });

  test("usage names every command; a command's usage lists its options", () => {
    for (const c of ['cycle', 'follow', 'status', 'drain', 'inventory', 'skip-pod', 'force-delete-pod', 'retry-now']) expect(usage()).toContain(`  ${c} `);
    expect(usage('cycle')).toContain('-n, --namespace <namespace>');
    expect(usage('drain')).toContain('--again');
  });

  test('an unknown command or topic is refused', () => {
    expect(refusal('frob')).toBe('unknown command "frob"');
    expect(refusal('help frob')).toBe('unknown command "frob"');
    expect(refusal('--selectr')).toContain('unknown option --selectr');
    expect(() => parseCommand([])).toThrow('no command given');
  });
});

describe('references', () => {
  test('a request, in either form', () => {
    expect(parseRef('team-a/cycle-1')).toEqual({ kind: 'request', namespace: 'team-a', name: 'cycle-1' });
    expect(parseRef('cnr/team-a/cycle-1')).toEqual({ kind: 'request', namespace: 'team-a', name: 'cycle-1' });
  });

  test('a node name', () => {
    expect(parseRef('ip-10-0-0-1.ec2.internal')).toEqual({ kind: 'node', node: 'ip-10-0-0-1.ec2.internal' });
  });

  test('workflow IDs: a CLI drain, a request, a node cycle and its drain', () => {
    expect(parseRef('drain/n1')).toMatchObject({ kind: 'workflow', id: 'drain/n1', parsed: { kind: 'drain', node: 'n1' } });
    expect(parseRef('cnr/ns/r/u-1')).toMatchObject({ kind: 'workflow', parsed: { kind: 'request', requestId: 'cnr/ns/r/u-1' } });
    expect(parseRef('cnr/ns/r/u-1/node/n1')).toMatchObject({ parsed: { kind: 'nodeCycle', node: 'n1', requestId: 'cnr/ns/r/u-1' } });
    expect(parseRef('cnr/ns/r/u-1/node/n1/drain')).toMatchObject({ parsed: { kind: 'nodeDrain', node: 'n1', namespace: 'ns', name: 'r', uid: 'u-1' } });
  });

  test.each(['a/b/c', 'cnr/ns', 'cnr/ns/r/u/node', 'cnr/ns/r/u/node/n/x', 'drain/', 'Node_1', 'NS/r', ''])('refuses %j', (s) => {
    expect(() => parseRef(s)).toThrow(UsageError);
  });

  test('signals take a pod as <namespace>/<name> and an optional node', () => {
    expect(parse('skip-pod team-a/cycle-1 app/web-0 --node n1 --reason maintenance')).toEqual({
      cmd: 'skip-pod',
      ref: { kind: 'request', namespace: 'team-a', name: 'cycle-1' },
      pod: { namespace: 'app', name: 'web-0' },
      node: 'n1',
      reason: 'maintenance',
    });
    expect(refusal('force-delete-pod drain/n1 web-0')).toBe('expected a pod as <namespace>/<name> (or <name> with -n), got "web-0"');
    expect(refusal('retry-now drain/n1 extra')).toBe('unexpected argument "extra" for retry-now');
  });
});

describe('workflow IDs', () => {
  test('are built and read back by one module', () => {
    const req = cycleWorkflowId({ namespace: 'ns', name: 'r', uid: 'u' });
    expect(req).toBe('cnr/ns/r/u');
    expect(drainWorkflowId('n1')).toBe('drain/n1');
    expect(nodeDrainWorkflowId(nodeCycleWorkflowId(req, 'n1'))).toBe('cnr/ns/r/u/node/n1/drain');
    expect(parseWorkflowId('lock/kwok/g')).toBeUndefined();
    expect(parseWorkflowId('inventory-123')).toBeUndefined();
  });

  test("a workflow found by node leads to that node's drain", () => {
    expect(drainIdFor('drain/n1', 'n1')).toBe('drain/n1');
    expect(drainIdFor('cnr/ns/r/u', 'n1')).toBe('cnr/ns/r/u/node/n1/drain');
    expect(drainIdFor('cnr/ns/r/u/node/n1', 'n1')).toBe('cnr/ns/r/u/node/n1/drain');
    expect(drainIdFor('cnr/ns/r/u/node/n2', 'n1')).toBeUndefined();
    expect(drainIdFor('inventory-1', 'n1')).toBeUndefined();
  });
});

describe('pods left after a drain', () => {
  const pod = (name: string, extra: Partial<{ phase: string; owner: string; mirror: boolean; terminating: boolean }> = {}): V1Pod => ({
    metadata: {
      namespace: 'app',
      name,
      ownerReferences: extra.owner ? [{ kind: extra.owner, controller: true, apiVersion: 'apps/v1', name: 'x', uid: 'u' }] : undefined,
      annotations: extra.mirror ? { 'kubernetes.io/config.mirror': 'x' } : undefined,
      deletionTimestamp: extra.terminating ? new Date() : undefined,
    },
    status: { phase: extra.phase ?? 'Running' },
  });

  test('are the running pods the drain did not keep on purpose', () => {
    const pods = [
      pod('web-1', { owner: 'ReplicaSet' }),
      pod('old', { terminating: true }),
      pod('agent', { owner: 'DaemonSet' }),
      pod('static', { mirror: true }),
      pod('job', { phase: 'Succeeded' }),
      pod('kept'),
    ];
    expect(podsLeft(pods, new Set(['app/kept']))).toEqual(['app/old (terminating)', 'app/web-1']);
    expect(podsLeft([pod('agent', { owner: 'DaemonSet' })], new Set())).toEqual([]);
  });
});

describe('#24.11 a bad command line is one line on stderr (README: "every error is one line"), exit 2', () => {
  const runLine = async (argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await run(argv, { out: (l) => out.push(l), err: (l) => err.push(...l.split('\n')) });
    return { code, out, err };
  };

  test.each([
    [['maintenance', 'rack-7', 'stage', 'Bogus'], 'unknown stage Bogus; one of Idle, Cordon, Drain, Complete', 'maintenance'],
    [['maintenance', 'rack-7', 'stage', 'Drain', '--reason', '@1025 characters'], '--reason is longer than 1024 characters', 'maintenance'],
    [['maintenance', 'rack-7', 'go'], 'unknown action "go"', 'maintenance'],
    [['maintenance'], 'maintenance needs <name> <action>', 'maintenance'],
    [['cycle', 'workers', '--concurrency', 'two'], '--concurrency must be a positive integer', 'cycle'],
    [['drain', '--nodee'], 'unknown option --nodee for drain', 'drain'],
    [['follow'], 'follow needs <ref>', 'follow'],
    [['status', 'a/b/c'], 'is not', 'status'],
    [['inventory', 'extra'], 'unexpected argument', 'inventory'],
    [['skip-pod', 'drain/n1', 'web-0', '--reason', 'r'], 'expected a pod as <namespace>/<name>', 'skip-pod'],
    [['force-delete-pod', 'drain/n1'], 'force-delete-pod needs <namespace>/<pod>', 'force-delete-pod'],
    [['retry-now', 'drain/n1', '--node'], 'option --node needs a value', 'retry-now'],
    [['help', 'frob'], 'unknown command "frob"', undefined],
    [['frob'], 'unknown command "frob"', undefined],
    [[], 'no command given', undefined],
  ] as const)('%j', async (argv, mention, command) => {
    const r = await runLine(argv.map((a) => (a === '@1025 characters' ? 'x'.repeat(1025) : a)));
    expect({ code: r.code, out: r.out, lines: r.err.length }).toEqual({ code: 2, out: [], lines: 1 });
    expect(r.err[0]).toMatch(/^slipway: /);
    expect(r.err[0]).toContain(mention);
    expect(r.err[0]).toContain(command ? `(slipway ${command} --help shows its usage)` : '(slipway --help lists the commands)');
  });
});
