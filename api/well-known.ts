// Kubernetes' own well-known names that Slipway reads (Slipway's own labels and annotations live
// with the types that own them).

/** The taint a cordon puts on a node; pods that tolerate it may be scheduled back onto it. */
export const UNSCHEDULABLE_TAINT = 'node.kubernetes.io/unschedulable';

/** The node label that carries the node's hostname; a nodeSelector on it pins a pod to one node. */
export const HOSTNAME_LABEL = 'kubernetes.io/hostname';
