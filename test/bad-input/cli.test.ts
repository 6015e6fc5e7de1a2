// The CLI given bad input, aimed at the guard's nodes with a real worker on the task queue it uses:
// a mistake on the command line is exit 2 with one line (what was wrong, where --help shows the usage); a missing object, a
// missing kubeconfig or an unreachable Temporal is exit 1 with one line naming it; never a stack
// trace, and nothing disrupted.
import { WorkflowNotFoundError } from '@temporalio/common';
import { CYCLE_NODE_REQUEST } from '../../api/cycle-node-request.js';
import { drainWorkflowId } from '../../workflows/ids.js';
import { cli, expectOneLineError, expectUsageError } from '../support/cli.js';
import { Guard } from './guard.js';

const g = new Guard('bi-cli');
const env = () => ({ SLIPWAY_TASK_QUEUE: g.f.taskQueue });
const NO_KUBECONFIG = '/nonexistent/slipway-kubeconfig';

beforeAll(() => g.setup(), 120_000);
afterAll(() => g.teardown());

/** No drain workflow was started for the guard's nodes. */
async function noDrainStarted(): Promise<void> {
  for (const n of g.nodes) await expect(g.f.client.workflow.getHandle(drainWorkflowId(n)).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
}

describe('#24.11 a mistake on the command line: exit 2, one line, refused before connecting', () => {
  test.each([
    [['drain', '@node', '--nodee'], 'unknown option --nodee for drain'],
    [['drain', '--node', '@node'], 'unknown option --node for drain'],
    [['drain'], 'drain needs <node>'],
    [['drain', '@node', '@node'], 'unexpected argument'],
    [['inventory', '--selectr', 'a=b'], 'unknown option --selectr for inventory'],
    [['cycle', '@group', '--concurrency', 'two'], '--concurrency must be a positive integer, got "two"'],
    [['cycle', '@group', '--concurrency', '0'], '--concurrency must be a positive integer, got "0"'],
    [['cycle', '@group', '-n'], 'option --namespace needs a value'],
    [['cycle', '@group', '--method', 'Yolo'], 'Yolo'],
    [['status'], 'status needs <ref>'],
    [['frob'], 'unknown command "frob"'],
    [['maintenance', 'nothing-here', 'stage', 'Bogus'], 'unknown stage Bogus; one of Idle, Cordon, Drain, Complete'],
    [['maintenance', 'nothing-here', 'done'], 'maintenance nothing-here done needs <node>'],
    [['maintenance', 'nothing-here', 'done', 'Bad_Node'], '"Bad_Node" is not a valid node name'],
    [['maintenance', 'nothing-here', 'pause', '@node'], 'unexpected argument'],
  ])('%j', async (args, mention) => {
    const m = await g.mark();
    const argv = args.map((a) => (a === '@node' ? g.nodes[0]! : a === '@group' ? g.group : a));
    expectUsageError(await cli(argv, env()), mention);
    await noDrainStarted();
    await g.untouched(m);
  });
});

describe('a runtime error: exit 1, one line naming it', () => {
  test('an unreachable Temporal is named within seconds', async () => {
    const m = await g.mark();
    const r = await cli(['drain', g.nodes[0]!], { ...env(), TEMPORAL_ADDRESS: '127.0.0.1:1' });
    expectOneLineError(r, 'cannot reach Temporal at 127.0.0.1:1');
    expect(r.ms).toBeLessThan(8000);
    await g.untouched(m);
  });

  test('a missing kubeconfig is named', async () => {
    const m = await g.mark();
    expectOneLineError(await cli(['drain', g.nodes[0]!], { ...env(), KUBECONFIG: NO_KUBECONFIG }), `kubeconfig ${NO_KUBECONFIG}`, 'not found');
    await noDrainStarted();
    await g.untouched(m);
  });

  test('a node that does not exist', async () => {
    const m = await g.mark();
    const ghost = `${g.group}-ghost`;
    expectOneLineError(await cli(['drain', ghost], env()), `node ${ghost} not found`);
    await expect(g.f.client.workflow.getHandle(drainWorkflowId(ghost)).describe()).rejects.toBeInstanceOf(WorkflowNotFoundError);
    await g.untouched(m);
  });

  test('a node group with no node: refused before anything is created', async () => {
    const m = await g.mark();
    const group = `${g.group}-nope`;
    const r = await cli(['cycle', group, '-n', g.f.ns, '--no-follow'], env());
    expectOneLineError(r, `node group ${group}: no node has slipway.dev/node-group=${group}; nothing created`);
    expect(await g.f.getCnr(group)).toBeUndefined();
    const { group: apiGroup, version, plural } = CYCLE_NODE_REQUEST;
    const all = (await g.f.custom.listNamespacedCustomObject({ group: apiGroup, version, plural, namespace: g.f.ns })) as { items: unknown[] };
    expect(all.items).toEqual([]);
    await g.untouched(m);
  });

  test('a namespace that does not exist', async () => {
    const m = await g.mark();
    expectOneLineError(await cli(['cycle', g.group, '-n', `${g.f.ns}-nope`, '--no-follow'], env()), `${g.f.ns}-nope`);
    await g.untouched(m);
  });

  test.each([
    [['status', 'drain/@group-nothing'], 'no workflow drain/@group-nothing'],
    [['follow', '@ns/nothing'], 'CycleNodeRequest @ns/nothing not found'],
    [['status', '@group-nothing'], 'no drain of node @group-nothing found'],
    [['skip-pod', 'drain/@group-nothing', '@ns/pod'], 'drain/@group-nothing'],
    [['retry-now', 'drain/@group-nothing'], 'drain/@group-nothing'],
  ])('a missing object: %j', async (args, mention) => {
    const m = await g.mark();
    const fill = (s: string) => s.replaceAll('@group', g.group).replaceAll('@ns', g.f.ns);
    expectOneLineError(await cli(args.map(fill), env()), fill(mention));
    await g.untouched(m);
  });
});
