// Names the bridge gives things: its finalizer, the CycleNodeStatus objects of a request and the
// label that ties them to it. Kubernetes limits names (DNS subdomain, 253) and label values (63),
// so long combinations are truncated and made unique again with a short hash.
import { createHash } from 'node:crypto';


const MAX_NAME = 253;
const MAX_LABEL_VALUE = 63;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$/;

const shortHash = (s: string, n = 10) => createHash('sha256').update(s).digest('hex').slice(0, n);

/** A DNS subdomain: lower-case labels of alphanumerics and '-', each starting and ending alphanumeric. */
function sanitize(s: string): string {
  return s
    .toLowerCase()
    .split('.')
    .map((l) => l.replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, ''))
    .filter((l) => l.length > 0)
    .join('.');
}

/** Cuts `s` to at most `max` characters and appends `-<hash of full>`, keeping the result valid. */
function truncateWithHash(s: string, full: string, max: number): string {
  const h = shortHash(full);
  const head = s.slice(0, max - h.length - 1).replace(/[^a-z0-9]+$/, '');
  // `head` ends alphanumeric, so `-<hash>` keeps the last label valid.
  return head.length > 0 ? `${head}-${h}` : h;
}

/**
 * `<request>-<node>`, the CycleNodeStatus of one node of a request. Names that are too long (or
 * need sanitising) become a truncated prefix plus a hash of the pair, so they stay unique and stable.
 */
export function cycleNodeStatusName(requestName: string, nodeName: string, max = MAX_NAME): string {
  const plain = `${requestName}-${nodeName}`;
  const clean = sanitize(plain);
  if (clean === plain && plain.length <= max) return plain;
  return truncateWithHash(clean, `${requestName}\u0000${nodeName}`, max);
}

/** The request's name as a label value: itself when valid (≤ 63 characters), else truncated + hash. */
export function requestLabelValue(requestName: string): string {
  if (requestName.length <= MAX_LABEL_VALUE && LABEL_VALUE.test(requestName)) return requestName;
  return truncateWithHash(sanitize(requestName), requestName, MAX_LABEL_VALUE);
}
