// Seeds moto with a launch template and an Auto Scaling group (idempotent). Usage:
//   node dist/stack/aws/seed.js --group slipway-asg --size 3 [--zones us-east-1a,us-east-1b]
import {
  CreateAutoScalingGroupCommand,
  DescribeAutoScalingGroupsCommand,
  UpdateAutoScalingGroupCommand,
  type AutoScalingGroup,
} from '@aws-sdk/client-auto-scaling';
import { CreateLaunchTemplateCommand, DescribeLaunchTemplatesCommand } from '@aws-sdk/client-ec2';
import { flag } from '../args.js';
import { createAws, type Aws } from '../../activities/aws.js';

export const LAUNCH_TEMPLATE = 'slipway-local';

async function ensureLaunchTemplate(aws: Aws): Promise<void> {
  try {
    await aws.ec2.send(new DescribeLaunchTemplatesCommand({ LaunchTemplateNames: [LAUNCH_TEMPLATE] }));
    return;
  } catch {
    // not found: create it below
  }
  await aws.ec2.send(
    new CreateLaunchTemplateCommand({
      LaunchTemplateName: LAUNCH_TEMPLATE,
      LaunchTemplateData: { ImageId: 'ami-12c6146b', InstanceType: 'm5.large' },
    }),
  );
}

export async function describeGroup(aws: Aws, name: string): Promise<AutoScalingGroup | undefined> {
  const out = await aws.autoscaling.send(new DescribeAutoScalingGroupsCommand({ AutoScalingGroupNames: [name] }));
  return out.AutoScalingGroups?.[0];
}

/** Ensures the group exists with `size` desired instances (MaxSize leaves room for surge). */
export async function seedAutoScalingGroup(
  aws: Aws,
  name: string,
  size: number,
  zones: string[] = ['us-east-1a'],
): Promise<AutoScalingGroup> {
  await ensureLaunchTemplate(aws);
  if (!(await describeGroup(aws, name))) {
    await aws.autoscaling.send(
      new CreateAutoScalingGroupCommand({
        AutoScalingGroupName: name,
        MinSize: 0,
        MaxSize: size * 2 + 2,
        DesiredCapacity: size,
        LaunchTemplate: { LaunchTemplateName: LAUNCH_TEMPLATE, Version: '$Latest' },
        AvailabilityZones: zones,
      }),
    );
  } else {
    await aws.autoscaling.send(
      new UpdateAutoScalingGroupCommand({ AutoScalingGroupName: name, MaxSize: size * 2 + 2, DesiredCapacity: size }),
    );
  }
  return (await describeGroup(aws, name))!;
}


if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const name = flag(args, 'group') ?? 'slipway-asg';
  const g = await seedAutoScalingGroup(createAws(), name, Number(flag(args, 'size') ?? 3), flag(args, 'zones')?.split(','));
  console.log(`${name}: ${(g.Instances ?? []).map((i) => `${i.InstanceId} (${i.LifecycleState})`).join(', ')}`);
}
