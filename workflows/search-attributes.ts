// Custom search attributes, so the Web UI and `temporal workflow list` can find cycles and
// maintenances by node group, node and phase. stack/stack.sh registers the same list on the dev server.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

export const NodeGroupAttr = defineSearchAttributeKey('SlipwayNodeGroup', SearchAttributeType.KEYWORD);
export const NodesAttr = defineSearchAttributeKey('SlipwayNodes', SearchAttributeType.KEYWORD_LIST);
export const PhaseAttr = defineSearchAttributeKey('SlipwayPhase', SearchAttributeType.KEYWORD);
/** kind/name of the custom resource a workflow serves. */
export const ObjectAttr = defineSearchAttributeKey('SlipwayObject', SearchAttributeType.KEYWORD);

export const ALL_SEARCH_ATTRIBUTES = [NodeGroupAttr, NodesAttr, PhaseAttr, ObjectAttr];
