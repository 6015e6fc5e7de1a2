// Moto's request recorder as the AWS side's audit log: which API calls reached "AWS", with what.
// The stack points it at logs/moto-recording.jsonl; recording is off until a test starts it.
const endpoint = () => process.env.AWS_ENDPOINT_URL ?? 'http://127.0.0.1:5000';

async function recorder(action: 'reset-recording' | 'start-recording' | 'stop-recording'): Promise<void> {
  const r = await fetch(`${endpoint()}/moto-api/recorder/${action}`, { method: 'POST' });
  if (!r.ok) throw new Error(`moto recorder ${action}: HTTP ${r.status}`);
}

export async function startRecording(): Promise<void> {
  await recorder('reset-recording');
  await recorder('start-recording');
}

export const stopRecording = () => recorder('stop-recording');

export interface AwsCall {
  action: string;
  /** Every instance ID the call names (query protocol InstanceIds.member.N / InstanceId.N, or JSON). */
  instanceIds: string[];
  /** The other parameters (query protocol) or top-level fields (JSON), as strings. */
  params: Record<string, string>;
}

export async function recordedCalls(): Promise<AwsCall[]> {
  const r = await fetch(`${endpoint()}/moto-api/recorder/download-recording`);
  if (!r.ok) throw new Error(`moto recorder download: HTTP ${r.status}`);
  const text = await r.text();
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const e = JSON.parse(line) as { headers: Record<string, string>; body: string | null; body_encoded: boolean };
      const body = e.body ? (e.body_encoded ? Buffer.from(e.body, 'base64').toString('utf8') : e.body) : '';
      const target = Object.entries(e.headers).find(([k]) => k.toLowerCase() === 'x-amz-target')?.[1];
      if (target) {
        const json = (body ? JSON.parse(body) : {}) as Record<string, unknown> & { InstanceIds?: string[] };
        const params = Object.fromEntries(Object.entries(json).map(([k, v]) => [k, String(v)]));
        return { action: target.split('.').pop()!, instanceIds: json.InstanceIds ?? [], params };
      }
      const params = new URLSearchParams(body);
      const instanceIds = [...params.entries()].filter(([k]) => /^InstanceIds?(\.member)?\.\d+$/.test(k)).map(([, v]) => v);
      return { action: params.get('Action') ?? '', instanceIds, params: Object.fromEntries(params.entries()) };
    });
}
