// Drift on AWS: an instance of an Auto Scaling group launched from something other than what the
// group would launch now. Two witnesses, because each misses cases the other sees:
//   - the launch template version Auto Scaling records per instance, against the group's version
//     ($Latest / $Default resolved to a number); a launch configuration name likewise;
//   - the instance's image and type (EC2) against the resolved template version's. This one also
//     catches a group whose per-instance records say little (moto reports the template's default
//     version for every instance, whatever it was launched from).
import type { AutoScalingGroup } from '@aws-sdk/client-auto-scaling';
import { DescribeLaunchTemplatesCommand, DescribeLaunchTemplateVersionsCommand, paginateDescribeInstances } from '@aws-sdk/client-ec2';
import type { Aws } from '../aws.js';
import { providerIDFor } from './aws-provider-id.js';
import type { DriftedInstance } from './types.js';

/** What the group launches now. */
export interface GroupTemplate {
  launchTemplateId?: string;
  version?: string;
  launchConfigurationName?: string;
  imageId?: string;
  instanceType?: string;
}

/** What one instance was launched with. */
export interface InstanceFacts {
  instanceId: string;
  zone: string;
  launchTemplateId?: string;
  version?: string;
  launchConfigurationName?: string;
  imageId?: string;
  instanceType?: string;
}

/** Why the instance differs from the group's template, or undefined when it does not. Pure. */
export function driftReason(t: GroupTemplate, i: InstanceFacts): string | undefined {
  const why: string[] = [];
  if (t.launchTemplateId && i.launchTemplateId && t.launchTemplateId !== i.launchTemplateId) why.push(`launch template ${i.launchTemplateId}, the group's ${t.launchTemplateId}`);
  else if (t.version && i.version && t.version !== i.version) why.push(`launch template version ${i.version}, the group's ${t.version}`);
  if (t.launchConfigurationName && i.launchConfigurationName !== t.launchConfigurationName) why.push(`launch configuration ${i.launchConfigurationName ?? '(none)'}, the group's ${t.launchConfigurationName}`);
  if (t.imageId && i.imageId && t.imageId !== i.imageId) why.push(`image ${i.imageId}, the template's ${t.imageId}`);
  if (t.instanceType && i.instanceType && t.instanceType !== i.instanceType) why.push(`instance type ${i.instanceType}, the template's ${t.instanceType}`);
  return why.length ? why.join('; ') : undefined;
}

/** The group's launch template with its version resolved to a number, and that version's image and type. */
async function groupTemplate(aws: Aws, g: AutoScalingGroup): Promise<GroupTemplate> {
  const spec = g.LaunchTemplate ?? g.MixedInstancesPolicy?.LaunchTemplate?.LaunchTemplateSpecification;
  if (!spec) return { launchConfigurationName: g.LaunchConfigurationName };
  const lt = (await aws.ec2.send(new DescribeLaunchTemplatesCommand(spec.LaunchTemplateId ? { LaunchTemplateIds: [spec.LaunchTemplateId] } : { LaunchTemplateNames: [spec.LaunchTemplateName!] }))).LaunchTemplates?.[0];
  if (!lt) throw new Error(`launch template ${spec.LaunchTemplateId ?? spec.LaunchTemplateName} of group ${g.AutoScalingGroupName} not found`);
  const asked = spec.Version ?? '$Default';
  const version = asked === '$Latest' ? String(lt.LatestVersionNumber) : asked === '$Default' ? String(lt.DefaultVersionNumber) : asked;
  const v = (await aws.ec2.send(new DescribeLaunchTemplateVersionsCommand({ LaunchTemplateId: lt.LaunchTemplateId, Versions: [version] }))).LaunchTemplateVersions?.[0];
  // A mixed-instances group launches several types: only the image is compared then.
  const mixed = !g.LaunchTemplate;
  return { launchTemplateId: lt.LaunchTemplateId, version, imageId: v?.LaunchTemplateData?.ImageId, instanceType: mixed ? undefined : v?.LaunchTemplateData?.InstanceType };
}

/** The group's InService/Standby instances that drifted from its template. */
export async function awsDriftedInstances(aws: Aws, g: AutoScalingGroup): Promise<DriftedInstance[]> {
  const members = (g.Instances ?? []).filter((i) => !/^Terminat|^Detach/.test(i.LifecycleState ?? ''));
  if (members.length === 0) return [];
  const template = await groupTemplate(aws, g);
  const ec2 = new Map<string, { imageId?: string; instanceType?: string }>();
  for await (const page of paginateDescribeInstances({ client: aws.ec2 }, { Filters: [{ Name: 'instance-id', Values: members.map((i) => i.InstanceId!) }] })) {
    for (const r of page.Reservations ?? []) for (const inst of r.Instances ?? []) ec2.set(inst.InstanceId!, { imageId: inst.ImageId, instanceType: inst.InstanceType });
  }
  const out: DriftedInstance[] = [];
  for (const i of members) {
    const facts: InstanceFacts = {
      instanceId: i.InstanceId!,
      zone: i.AvailabilityZone ?? '',
      launchTemplateId: i.LaunchTemplate?.LaunchTemplateId,
      version: i.LaunchTemplate?.Version,
      launchConfigurationName: i.LaunchConfigurationName,
      ...ec2.get(i.InstanceId!),
    };
    const reason = driftReason(template, facts);
    if (reason) out.push({ providerID: providerIDFor(facts.zone, facts.instanceId), reason });
  }
  return out.sort((a, b) => a.providerID.localeCompare(b.providerID));
}
