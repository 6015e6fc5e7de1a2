// The request options that make a client-node patch call send its body as a JSON merge patch
// (RFC 7386) or a strategic merge patch. client-node 1.x sends a JSON patch (a list of operations)
// unless told otherwise, so every patch call of ours passes one of these; one definition, so no call
// site can pick a different Content-Type by accident.
import { PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';

/** application/merge-patch+json: objects merge, a null deletes a key, arrays are replaced whole. */
export const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

/** application/strategic-merge-patch+json: built-in kinds only; lists merge by their patch keys (a Node's conditions by type). */
export const strategicMergePatch = setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch);

/** application/apply-patch+yaml: server-side apply (needs a fieldManager; fields are owned per manager). */
export const serverSideApply = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);
