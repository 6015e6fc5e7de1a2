// An EC2 instance's Kubernetes providerID, as the AWS cloud provider writes it on the Node. The AWS
// provider reads it; the local stack's aws-node-sync (stack/aws/) writes it, playing EKS.
/** `aws:///us-east-1a/i-0123` → `i-0123` */
export function instanceIdFromProviderID(providerID: string | undefined): string | undefined {
  const m = /^aws:\/\/\/[^/]*\/(i-[0-9a-zA-Z]+)$/.exec(providerID ?? '');
  return m?.[1];
}

export function providerIDFor(zone: string, instanceId: string): string {
  return `aws:///${zone}/${instanceId}`;
}
