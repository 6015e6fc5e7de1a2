// Dependency locks (yaook; spec NM-5.9–5.13): a pod declares the components it provides, dependents
// hold locks on the node (an annotation per holder, or an implicit lock from a pod that requires the
// component), and a provider stays on the node until every lock on its components is gone. These are
// the names other operators read and write, and their parsers. Applies to every Slipway drain.

/** Pod annotation: the components it provides, comma-separated ("l2-agent,dhcp"). */
export const PROVIDES_ANNOTATION = 'slipway.dev/provides';
/** Pod annotation: the components it needs on its node; an implicit lock until the pod has left. */
export const REQUIRES_ANNOTATION = 'slipway.dev/requires';
/** Node annotation `<component>.lock.slipway.dev/<holder>: ""`, set and removed by the dependents' operators. */
export const LOCK_ANNOTATION_INFIX = '.lock.slipway.dev/';
/** Node label `maintenance-required.slipway.dev/<component>: "true"` while a provider of it is due and held (NM-5.10). */
export const MAINTENANCE_REQUIRED_PREFIX = 'maintenance-required.slipway.dev/';

export const lockAnnotation = (component: string, holder: string) => `${component}${LOCK_ANNOTATION_INFIX}${holder}`;
export const maintenanceRequiredLabel = (component: string) => `${MAINTENANCE_REQUIRED_PREFIX}${component}`;

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/**
 * The components a provides/requires annotation names, with a warning for each that is not a DNS
 * label. A malformed name still counts, compared as written: dropping it could free a provider that
 * something depends on ("avoid data loss at all cost").
 */
export function parseComponents(annotation: string, value: string | undefined): { components: string[]; warnings: string[] } {
  if (value === undefined) return { components: [], warnings: [] };
  const components = [...new Set(value.split(',').map((c) => c.trim()).filter(Boolean))].sort();
  const warnings = components.filter((c) => !DNS_LABEL.test(c)).map((c) => `annotation ${annotation}: component "${c}" is not a DNS label (compared as written)`);
  if (!components.length) warnings.push(`annotation ${annotation} names no component; ignored`);
  return { components, warnings };
}

/** The explicit locks on a node: component → holders (sorted), from its annotations. */
export function nodeLocks(annotations: Record<string, string> | undefined): Record<string, string[]> {
  const locks: Record<string, string[]> = {};
  for (const key of Object.keys(annotations ?? {}).sort()) {
    const i = key.indexOf(LOCK_ANNOTATION_INFIX);
    if (i <= 0) continue;
    const holder = key.slice(i + LOCK_ANNOTATION_INFIX.length);
    if (!holder) continue;
    (locks[key.slice(0, i)] ??= []).push(holder);
  }
  return locks;
}

/** The components a node's labels say are required (NM-5.10), to set or clear. */
export function requiredComponents(labels: Record<string, string> | undefined): string[] {
  return Object.keys(labels ?? {})
    .filter((k) => k.startsWith(MAINTENANCE_REQUIRED_PREFIX))
    .map((k) => k.slice(MAINTENANCE_REQUIRED_PREFIX.length))
    .sort();
}
