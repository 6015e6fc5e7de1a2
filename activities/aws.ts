// AWS client settings: the SDK's default credential chain and region, plus an explicit
// endpoint (AWS_ENDPOINT_URL) for emulators such as moto, passed directly rather than relying
// on the SDK's own env lookup (which regressed in @smithy/middleware-endpoint 4.1.14).
import { AutoScalingClient } from '@aws-sdk/client-auto-scaling';
import { EC2Client } from '@aws-sdk/client-ec2';

type Env = Record<string, string | undefined>;

export interface AwsSettings {
  region: string;
  endpoint?: string;
  maxAttempts: number;
}

export function awsSettings(env: Env = process.env): AwsSettings {
  return {
    region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1',
    endpoint: env.AWS_ENDPOINT_URL || undefined,
    // The SDK retries throttling and 5xx itself; Temporal retries the activity on top.
    maxAttempts: Number(env.SLIPWAY_AWS_MAX_ATTEMPTS ?? 5),
  };
}

export interface Aws {
  autoscaling: AutoScalingClient;
  ec2: EC2Client;
}

export function createAws(settings: AwsSettings = awsSettings()): Aws {
  return { autoscaling: new AutoScalingClient(settings), ec2: new EC2Client(settings) };
}
