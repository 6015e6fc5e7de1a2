// Custom search attributes, so the Web UI and `temporal workflow list` can find cycles and
// maintenances by node group, node and phase. stack/stack.sh registers the same list on the dev server.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const NodeGroupAttr = defineSearchAttributeKey('SlipwayNodeGroup', SearchAttributeType.KEYWORD);
export const NodesAttr = defineSearchAttributeKey('SlipwayNodes', SearchAttributeType.KEYWORD_LIST);
export const PhaseAttr = defineSearchAttributeKey('SlipwayPhase', SearchAttributeType.KEYWORD);
/** kind/name of the custom resource a workflow serves. */
export const ObjectAttr = defineSearchAttributeKey('SlipwayObject', SearchAttributeType.KEYWORD);

export const ALL_SEARCH_ATTRIBUTES = [NodeGroupAttr, NodesAttr, PhaseAttr, ObjectAttr];

/** Temporal's default limit on one search attribute value is 2,048 bytes; leave room. */
const SEARCH_ATTRIBUTE_BYTES = 2_000;

/**
 * The first names that fit a search attribute value: Temporal terminates a workflow whose upsert
 * exceeds the limit (2 KiB by default), which a batch of a hundred long node names does.
 */
export function fitting(names: string[], maxBytes = SEARCH_ATTRIBUTE_BYTES): string[] {
  let size = 2;
  const out: string[] = [];
  for (const n of names) {
    size += n.length + 3; // JSON-encoded; node names are DNS names (ASCII)
    if (size > maxBytes) break;
    out.push(n);
  }
  return out;
}
