// The node groups a request names. Free of zod, so the workflow bundle (one copy per V8 isolate)
// stays small.
export function nodeGroupsOf(s: { nodeGroupName?: string; nodeGroupsList?: string[] }): string[] {
  return [...new Set([s.nodeGroupName ?? '', ...(s.nodeGroupsList ?? [])].filter((g) => g.length > 0))];
}
