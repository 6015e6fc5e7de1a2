// What blocks a drain, read from its message (Cluster API's shape, `drainMessage` of
// workflows/drain/status.ts), and the aggregate that names each blocked node with its blocker lines.
// One home for both kinds that drain nodes: the CycleNodeRequest's Ready condition and Events
// (starter/bridge/cycle/status.ts) and the NodeMaintenance's message, Drained condition and Events
// (workflows/maintenance/status.ts, starter/bridge/maintenance-status.ts). Pure.

// Pods leaving, running to completion, pausing before a re-eviction, or left on the node because
// they keep coming back (the drain ends without them) do not block it.
const PASSING = /deletionTimestamp set|waiting for completion|evicted again after a pause|left on the node/;

/**
 * The `* Pods …: reason` lines of pods the drain cannot remove (a refused eviction, an invalid
 * DrainRule holding it, …), without the lines of pods leaving or running to completion. Empty: not blocked.
 */
export function drainBlockers(message: string | undefined): string[] {
  if (!message) return [];
  return message
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('* ') && !PASSING.test(l))
    .map((l) => l.slice(2));
}

/** The pods a blocker line names (`Pods a, b` of `Pods a, b: reason`): what identifies a block. */
export const blockedPods = (line: string) => line.slice(0, line.indexOf(':') >= 0 ? line.indexOf(':') : undefined);

/** Nodes named in an aggregate message; more are counted. */
export const MAX_NODES_SHOWN = 3;

const indent = (text: string, by: string) => text.replace(/\n/g, `\n${by}`);

/**
 * `message`, then one `* Node <name>: <drain message>` per node that reported one (blocked ones
 * first), its lines indented under it; beyond a few nodes, how many more (`more` names them).
 */
export function nodesMessage(message: string, nodes: ReadonlyArray<{ name: string; message: string }>, more = 'draining'): string {
  const sorted = nodes
    .filter((n) => n.message)
    .map((n) => ({ n, blocked: drainBlockers(n.message).length > 0 }))
    .sort((a, b) => Number(b.blocked) - Number(a.blocked) || (a.n.name < b.n.name ? -1 : a.n.name > b.n.name ? 1 : 0));
  if (!sorted.length) return message;
  const lines = [message].filter(Boolean);
  for (const { n } of sorted.slice(0, MAX_NODES_SHOWN)) lines.push(`* Node ${n.name}: ${indent(n.message, '  ')}`);
  const rest = sorted.length - MAX_NODES_SHOWN;
  if (rest > 0) lines.push(`* ${rest} more ${rest === 1 ? 'node' : 'nodes'} ${more}`);
  return lines.join('\n');
}
