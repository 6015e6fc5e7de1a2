// #25.3 The logger's pieces that need no process: the level from SLIPWAY_LOG_LEVEL, the fields that
// name an object, the terminal's text form, and the Temporal SDK's entries mapped onto our fields.
import { lineLog, logLevelFromEnv, objectFields, textLine } from '../../shared/log.js';
import { sdkFields, sdkLevel } from '../../worker/log.js';
import { pino } from 'pino';

describe('#25.3 logs', () => {
  test('#25.3 SLIPWAY_LOG_LEVEL picks the level, case-insensitive; unset or unknown is info', () => {
    expect(logLevelFromEnv({ SLIPWAY_LOG_LEVEL: 'WARN' })).toBe('warn');
    expect(logLevelFromEnv({ SLIPWAY_LOG_LEVEL: 'debug' })).toBe('debug');
    expect(logLevelFromEnv({})).toBe('info');
    expect(logLevelFromEnv({ SLIPWAY_LOG_LEVEL: 'loud' })).toBe('info');
  });

  test('#25.3 an object key becomes kind, namespace and name (cluster-scoped: no namespace)', () => {
    expect(objectFields('CycleNodeRequest', 'team-a/cycle-1')).toEqual({ kind: 'CycleNodeRequest', namespace: 'team-a', name: 'cycle-1' });
    expect(objectFields('NodeMaintenance', '/kernel-upgrade')).toEqual({ kind: 'NodeMaintenance', name: 'kernel-upgrade' });
  });

  test('#25.3 a Log line carries its fields and level into pino', () => {
    const out: string[] = [];
    const log = lineLog(pino({ base: undefined }, { write: (s: string) => void out.push(s) }).child({ component: 'bridge' }));
    log('team-a/cycle-1: added finalizer', { ...objectFields('CycleNodeRequest', 'team-a/cycle-1'), workflowId: 'cycle-x', level: 'warn' });
    log('plain');
    const [a, b] = out.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(a).toMatchObject({ level: 40, component: 'bridge', kind: 'CycleNodeRequest', namespace: 'team-a', name: 'cycle-1', workflowId: 'cycle-x', msg: 'team-a/cycle-1: added finalizer' });
    expect(b).toMatchObject({ level: 30, component: 'bridge', msg: 'plain' });
  });

  test('#25.3 on a terminal a line reads as text: time, level, component, the object, the message, other fields', () => {
    const json = JSON.stringify({ level: 'info', time: '2026-01-02T03:04:05.678Z', pid: 1, component: 'bridge', kind: 'CycleNodeStatus', namespace: 'ns', name: 's-1', node: 'n-1', workflowId: 'w-1', msg: 'node n-1 Drained', attempt: 2 });
    expect(textLine(json)).toBe('03:04:05.678 INFO  bridge [CycleNodeStatus ns/s-1] node=n-1 workflow=w-1 node n-1 Drained attempt=2\n');
    expect(textLine('not json')).toBe('not json');
  });

  test("#25.3 the Temporal SDK's entries: its levels map onto pino's, its namespace is not a Kubernetes one", () => {
    expect(sdkLevel('debug')).toBe('DEBUG');
    expect(sdkLevel('silent')).toBe('ERROR');
    const error = new Error('boom');
    expect(sdkFields({ namespace: 'default', workflowId: 'w-1', taskQueue: 'q', error })).toEqual({ workflowId: 'w-1', taskQueue: 'q', temporalNamespace: 'default', err: error });
  });
});
