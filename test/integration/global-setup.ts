// Brings the local stack up (a no-op when it already runs) and exports its endpoints to the tests.
import { execFileSync } from 'node:child_process';

export default function globalSetup(): void {
  execFileSync('bash', ['stack/stack.sh', 'up'], { stdio: ['ignore', 'inherit', 'inherit'] });
  const env = execFileSync('bash', ['stack/stack.sh', 'env'], { encoding: 'utf8' });
  for (const m of env.matchAll(/^export (.*)$/gm)) {
    for (const [, k, v] of m[1]!.matchAll(/(\w+)="?([^"\s]*)"?/g)) process.env[k!] = v!;
  }
}
