// Kubernetes' own well-known names that Slipway reads (Slipway's own labels and annotations live
// with the types that own them).

/** The taint a cordon puts on a node; pods that tolerate it may be scheduled back onto it. */
export const UNSCHEDULABLE_TAINT = 'node.kubernetes.io/unschedulable';
