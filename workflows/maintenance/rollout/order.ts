// The order a rollout takes its nodes in (RM-1.2, RM-1.3): partitions sorted, "" (no label) last;
// within a partition, by node name. Pure.

const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The partitions in the order the rollout takes them. */
export function partitionOrder(values: Iterable<string>): string[] {
  const set = new Set(values);
  const named = [...set].filter((v) => v !== '').sort(byString);
  return set.has('') ? [...named, ''] : named;
}

/** Node names in rollout order: by partition (partitionOrder), then by name. */
export function rolloutOrder(nodes: ReadonlyArray<{ name: string; partition: string }>): string[] {
  const rank = new Map(partitionOrder(nodes.map((n) => n.partition)).map((p, i) => [p, i]));
  return [...nodes].sort((a, b) => rank.get(a.partition)! - rank.get(b.partition)! || byString(a.name, b.name)).map((n) => n.name);
}
