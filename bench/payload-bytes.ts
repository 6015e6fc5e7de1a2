// The size of a payload as the SDK makes it (the default payload converter): data plus metadata,
// about what the server counts against its blob limits. Shared by both halves of the recorder
// (bench/payload-sizes.ts): usable in workflow code (no I/O).
import { defaultPayloadConverter } from '@temporalio/common';

export function payloadBytes(values: unknown[]): number {
  let n = 0;
  for (const v of values) {
    if (v === undefined) continue;
    const p = defaultPayloadConverter.toPayload(v);
    n += p.data?.length ?? 0;
    for (const [k, m] of Object.entries(p.metadata ?? {})) n += k.length + (m?.length ?? 0);
  }
  return n;
}
