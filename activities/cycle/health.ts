// HTTP health checks on nodes (Cyclops semantics): each check must pass once per node within its
// waitPeriod; errors and wrong answers are tolerated until then. Pre-termination checks POST a
// trigger once, then poll their health check.
import { heartbeat } from '@temporalio/activity';
import type { HealthCheck, PreTerminationCheck } from '../../api/cycle-node-request.js';
import { parseDuration } from '../../api/duration.js';
import { endpointFor } from '../../api/health-check.js';

const TIMEOUT_MS = 5000;

async function probe(url: string, method: 'GET' | 'POST', codes: number[], regex?: string): Promise<string | undefined> {
  try {
    const res = await fetch(url, { method, signal: AbortSignal.timeout(TIMEOUT_MS) });
    const body = await res.text();
    if (!codes.includes(res.status)) return `${method} ${url}: status ${res.status}`;
    if (regex && !new RegExp(regex).test(body)) return `${method} ${url}: body does not match /${regex}/`;
    return undefined;
  } catch (err) {
    return `${method} ${url}: ${(err as Error).message}`;
  }
}

/** Polls every check on every node until each has passed once, or until its waitPeriod (capped by maxWaitMs). */
export async function runHealthChecks(
  nodes: Array<{ name: string; internalIP?: string }>,
  checks: HealthCheck[],
  maxWaitMs: number,
  startedAt = Date.now(),
): Promise<{ passed: boolean; failures: string[] }> {
  const pending = new Map<string, { url: string; check: HealthCheck; last?: string }>();
  for (const n of nodes) checks.forEach((c, i) => pending.set(`${n.name}#${i}`, { url: endpointFor(c.endpoint, n.internalIP), check: c }));
  for (;;) {
    for (const [key, p] of pending) {
      p.last = await probe(p.url, 'GET', p.check.validStatusCodes, p.check.regexMatch);
      if (!p.last) pending.delete(key);
    }
    heartbeat({ pendingChecks: pending.size });
    if (pending.size === 0) return { passed: true, failures: [] };
    const now = Date.now();
    const expired = [...pending.entries()].filter(([, p]) => now - startedAt >= Math.min(parseDuration(p.check.waitPeriod), maxWaitMs));
    if (expired.length) return { passed: false, failures: expired.map(([k, p]) => `${k.split('#')[0]}: ${p.last}`) };
    await new Promise((r) => setTimeout(r, 1000));
  }
}

export function createHealthActivities() {
  return {
    /** The health checks on named nodes (a rolling maintenance's one node, RM-3.6); a request's selection pages itself (healthCheckSelection). */
    async healthCheckNodes(input: { nodes: Array<{ name: string; internalIP?: string }>; checks: HealthCheck[]; maxWaitMs: number }) {
      return runHealthChecks(input.nodes, input.checks, input.maxWaitMs);
    },
    async preTerminationChecks(input: { node: { name: string; internalIP?: string }; checks: PreTerminationCheck[] }) {
      const started = Date.now();
      for (const c of input.checks) {
        const failure = await probe(endpointFor(c.triggerEndpoint, input.node.internalIP), 'POST', c.validStatusCodes);
        if (failure) return { passed: false, failures: [`trigger ${failure}`] };
      }
      return runHealthChecks([input.node], input.checks.map((c) => c.healthCheck), Infinity, started);
    },
  };
}
