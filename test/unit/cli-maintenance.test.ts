// NM-7.12 the CLI's NodeMaintenance commands before anything connects: `maintenance <name> stage|status`,
// nm/<name> references for status and the pod signals, and the status text (stage, conditions, plan
// position, per-node targets as plan entries, messages with blockers, counts, limitedBy).
import { DEFAULT_DRAIN_PLAN } from '../../api/drain-plan.js';
import { parseCommand, type Command } from '../../starter/cli/args.js';
import { usage } from '../../starter/cli/help.js';
import { UsageError } from '../../starter/cli/errors.js';
import { renderMaintenance, rolloutLines } from '../../starter/cli/maintenance-render.js';
import { parseRef } from '../../starter/cli/refs.js';
import type { MaintenanceStatus } from '../../workflows/maintenance/types.js';

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

describe('maintenance <name> stage|status', () => {
  test('stage with a reason is the setStage update to send', () => {
    expect(parseCommand(['maintenance', 'rack-7', 'stage', 'Drain', '--reason', 'power work'])).toEqual({ cmd: 'maintenance', name: 'rack-7', action: 'stage', stage: 'Drain', reason: 'power work' });
    expect(parse('maintenance rack-7 stage Cordon')).toEqual({ cmd: 'maintenance', name: 'rack-7', action: 'stage', stage: 'Cordon', reason: undefined });
  });

  test('status', () => {
    expect(parse('maintenance rack-7 status')).toEqual({ cmd: 'maintenance', name: 'rack-7', action: 'status' });
  });

  test.each([
    ['maintenance', 'maintenance needs <name> <action>'],
    ['maintenance rack-7', 'maintenance needs <action>'],
    ['maintenance rack-7 stage', 'maintenance rack-7 stage needs <stage> (Idle, Cordon, Drain, Complete)'],
    ['maintenance rack-7 stage Sideways', 'unknown stage Sideways; one of Idle, Cordon, Drain, Complete'],
    ['maintenance rack-7 stage drain', 'unknown stage drain; one of Idle, Cordon, Drain, Complete'],
    ['maintenance rack-7 go Drain', 'unknown action "go" for maintenance (status, plan, stage, done, pause, resume)'],
    ['maintenance rack-7 status Drain', 'unexpected argument "Drain" for maintenance rack-7 status'],
    ['maintenance rack-7 status --reason x', '--reason goes with stage, not status'],
    ['maintenance Rack_7 status', '"Rack_7" is not a valid NodeMaintenance name'],
    ['maintenance rack-7 stage Drain --resaon x', 'unknown option --resaon for maintenance (did you mean --reason?)'],
  ])('refuses %j', (line, message) => {
    expect(refusal(line)).toContain(message);
  });

  test('is listed in the help', () => {
    expect(usage()).toMatch(/^ {2}maintenance +a NodeMaintenance/m);
    expect(usage('maintenance')).toContain('slipway maintenance <name> <action> [<stage|node>] [flags]');
  });
});

describe('#27.2 maintenance <name> done <node> | pause | resume (the rollout updates)', () => {
  test('done <node> is the rolloutNodeDone update for that node', () => {
    expect(parse('maintenance kernel-5-15 done node-7')).toEqual({ cmd: 'maintenance', name: 'kernel-5-15', action: 'done', node: 'node-7' });
  });

  test('pause and resume are the setRolloutPaused update', () => {
    expect(parse('maintenance kernel-5-15 pause')).toEqual({ cmd: 'maintenance', name: 'kernel-5-15', action: 'pause' });
    expect(parse('maintenance kernel-5-15 resume')).toEqual({ cmd: 'maintenance', name: 'kernel-5-15', action: 'resume' });
  });

  test.each([
    ['maintenance kernel-5-15 done', 'maintenance kernel-5-15 done needs <node> (a node of the maintenance whose work is done)'],
    ['maintenance kernel-5-15 done Node_7', '"Node_7" is not a valid node name'],
    ['maintenance kernel-5-15 done node-7 node-8', 'unexpected argument "node-8" for maintenance'],
    ['maintenance kernel-5-15 done node-7 --reason x', '--reason goes with stage, not done'],
    ['maintenance kernel-5-15 pause now', 'unexpected argument "now" for maintenance kernel-5-15 pause'],
    ['maintenance kernel-5-15 resume --reason x', '--reason goes with stage, not resume'],
    ['maintenance kernel-5-15 unpause', 'unknown action "unpause" for maintenance (status, plan, stage, done, pause, resume)'],
  ])('refuses %j', (line, message) => {
    expect(refusal(line)).toContain(message);
  });

  test('--help names the three actions, with examples', () => {
    const help = usage('maintenance');
    expect(help).toContain('slipway maintenance <name> <action> [<stage|node>] [flags]');
    expect(help).toContain('done <node> says that node\'s work is done');
    expect(help).toContain('pause takes no new node');
    expect(help).toContain('slipway maintenance kernel-5-15 done node-7');
    expect(help).toContain('slipway maintenance kernel-5-15 pause');
  });
});

describe('nm/<name> references', () => {
  test('nm/<name> is a maintenance, nm/<name>/<uid> its workflow, nm-node/<node>/drain a node drain', () => {
    expect(parseRef('nm/rack-7')).toEqual({ kind: 'maintenance', name: 'rack-7' });
    expect(parseRef('nm/rack-7/0b1c')).toMatchObject({ kind: 'workflow', parsed: { kind: 'maintenance', name: 'rack-7', uid: '0b1c' } });
    expect(parseRef('nm-node/n1/drain')).toMatchObject({ kind: 'workflow', parsed: { kind: 'maintenanceDrain', node: 'n1' } });
    // A request in a namespace is still <namespace>/<name> (or cnr/nm/<name> for a namespace called nm).
    expect(parseRef('team-a/r1')).toEqual({ kind: 'request', namespace: 'team-a', name: 'r1' });
    expect(parseRef('cnr/nm/r1')).toEqual({ kind: 'request', namespace: 'nm', name: 'r1' });
  });

  test.each(['nm/Rack_7', 'nm-node/n1/x'])('refuses %j', (s) => {
    expect(() => parseRef(s)).toThrow(UsageError);
  });

  test('status, skip-pod, force-delete-pod and retry-now accept nm/<name> (with --node or the pod)', () => {
    expect(parse('status nm/rack-7')).toEqual({ cmd: 'status', ref: { kind: 'maintenance', name: 'rack-7' } });
    expect(parse('skip-pod nm/rack-7 team-a/web-0 --reason flaky')).toEqual({
      cmd: 'skip-pod',
      ref: { kind: 'maintenance', name: 'rack-7' },
      pod: { namespace: 'team-a', name: 'web-0' },
      reason: 'flaky',
      node: undefined,
    });
    expect(parse('force-delete-pod nm/rack-7 team-a/web-0 --node n1')).toMatchObject({ node: 'n1' });
    expect(parse('retry-now nm/rack-7 --node n1')).toEqual({ cmd: 'retry-now', ref: { kind: 'maintenance', name: 'rack-7' }, node: 'n1' });
  });
});

describe('the status text', () => {
  const counts = { podsPendingEvictionRequest: 0, activeEvictionRequests: 0, podsBlocked: 0, podsKept: 0 };
  const s: MaintenanceStatus = {
    stage: 'Drain',
    stageStatuses: [
      { name: 'Idle', startTimestamp: '2026-01-01T00:00:00Z' },
      { name: 'Drain', startTimestamp: '2026-01-01T00:01:00Z' },
    ],
    drainPlan: [...DEFAULT_DRAIN_PLAN],
    planIndex: 1,
    selectedNodes: 3,
    nodeStatuses: [
      {
        nodeRef: { name: 'n1' },
        drainTargets: [{ podType: 'Default', podPriority: 1000000000 }, { podType: 'Default', podPriority: 2000000000, podSelector: { matchLabels: { app: 'db' } } }],
        drainMessage: 'Drain targets Default ≤ 2000000000: 1 pod blocked\n* Pods team-a/db-0: cannot evict: PDB team-a/db allows 0 disruptions',
        limitedBy: ['rack-8'],
        ...counts,
        activeEvictionRequests: 1,
        podsBlocked: 1,
      },
      { nodeRef: { name: 'n2' }, drainTargets: [], drainMessage: 'waiting for its first targets', limitedBy: [], ...counts, podsPendingEvictionRequest: 4 },
    ],
    nodeStatusesOmitted: 1,
    drainStatus: { reachedDrainTargets: [{ podType: 'Default', podPriority: 1000000000 }], drainMessage: '', ...counts, activeEvictionRequests: 1, podsBlocked: 1, podsPendingEvictionRequest: 4 },
    conditions: [
      { type: 'Ready', status: 'True', reason: 'Active', message: 'draining' },
      { type: 'Drained', status: 'False', reason: 'Draining', message: 'Drain: 1 pod blocked\n* more' },
    ],
    message: 'Drain: 2 of 3 nodes at Default ≤ 1000000000; n1 blocked by a PDB',
    completed: false,
  };

  test('NM-7.12 shows the stage, conditions, plan position and per node its targets, blockers, counts and limitedBy', () => {
    expect(renderMaintenance(s).split('\n')).toEqual([
      'stage Drain — started: Idle 2026-01-01T00:00:00Z, Drain 2026-01-01T00:01:00Z',
      'Drain: 2 of 3 nodes at Default ≤ 1000000000; n1 blocked by a PDB',
      '  Ready=True Active: draining',
      '  Drained=False Draining: Drain: 1 pod blocked',
      'plan: 12 entries; at entry 2, Default ≤ 2000000000',
      'reached on every node: Default ≤ 1000000000; pending 4, evicting 1, blocked 1, kept 0',
      'nodes: 3 selected',
      '  n1: targets Default ≤ 1000000000, Default ≤ 2000000000 app=db; limited by rack-8',
      '    Drain targets Default ≤ 2000000000: 1 pod blocked',
      '    * Pods team-a/db-0: cannot evict: PDB team-a/db allows 0 disruptions',
      '    pending 0, evicting 1, blocked 1, kept 0',
      '  n2: targets none',
      '    waiting for its first targets',
      '    pending 4, evicting 0, blocked 0, kept 0',
      '  … and 1 more node',
    ]);
  });

  test('a completed maintenance past its last entry says so', () => {
    const done = renderMaintenance({ ...s, stage: 'Complete', completed: true, planIndex: 12, nodeStatuses: [], nodeStatusesOmitted: 0 });
    expect(done).toMatch(/^stage Complete \(completed\)/);
    expect(done).toContain('plan: 12 entries; past the last entry');
  });

  test('#27.2 a rolling maintenance shows the rollout (phase, counts, partitions) and each node\'s phase', () => {
    const rolling: MaintenanceStatus = {
      ...s,
      nodeStatuses: [
        { ...s.nodeStatuses[0]!, limitedBy: [], phase: 'AwaitingWork', phaseTimes: [{ phase: 'Waiting', time: 't0' }, { phase: 'Cordoned', time: 't1' }, { phase: 'AwaitingWork', time: 't2' }], bootID: 'b-1' },
        { ...s.nodeStatuses[1]!, phase: 'Waiting', waitingFor: 'maxUnavailable (2 of 2 in progress)', phaseTimes: [{ phase: 'Waiting', time: 't0' }] },
        { ...s.nodeStatuses[1]!, nodeRef: { name: 'n3' }, phase: 'Failed', phaseTimes: [{ phase: 'Failed', time: 't3' }], message: 'nodeTimeout 1h passed while AwaitingWork\nmore' },
      ],
      nodeStatusesOmitted: 0,
      rollout: { phase: 'Running', maxUnavailable: 2, partitions: ['eu-1a', 'eu-1b', ''], partition: 'eu-1b', waiting: 5, inProgress: 2, done: 4, failed: 1, message: 'waiting for n1\'s work' },
    };
    const text = renderMaintenance(rolling).split('\n');
    expect(text.slice(6, 10)).toEqual([
      'rollout Running: 4 done, 1 failed, 2 in progress, 5 waiting; at most 2 at once',
      '  partitions: eu-1a → [eu-1b] → (unlabelled)',
      '  waiting for n1\'s work',
      'nodes: 3 selected',
    ]);
    expect(text).toContain('    rollout: AwaitingWork since t2');
    expect(text).toContain('    rollout: Waiting for maxUnavailable (2 of 2 in progress) since t0');
    expect(text).toContain('    rollout: Failed since t3: nodeTimeout 1h passed while AwaitingWork');
    expect(rolloutLines({ phase: 'Paused', waiting: 3, inProgress: 0, done: 0, failed: 0 })).toEqual(['rollout Paused: 0 done, 0 failed, 0 in progress, 3 waiting']);
  });

  test('#27.2 a maintenance without a rollout shows no rollout lines', () => {
    expect(renderMaintenance(s)).not.toMatch(/rollout/);
  });
});
