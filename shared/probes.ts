// Liveness and readiness for the worker and the bridge, as kubelet probes read them: GET /healthz
// answers 200 while the process runs; GET /readyz answers 200 once it reached its servers, else 503
// with the reason in the body. Served only when SLIPWAY_PROBE_PORT is set (the Deployments set it;
// local runs and tests that start several processes would otherwise fight over one port).
// GET /metrics on the same port serves the process's Prometheus registry (shared/metrics.ts), so a
// pod has one port for kubelet and Prometheus alike.
import { createServer, type Server } from 'node:http';
import type { Registry } from 'prom-client';

export interface Readiness {
  ready: boolean;
  /** Why not ready (or what it is doing), for the 503 body and the log. */
  reason: string;
}

export interface Probes {
  readonly port: number;
  close(): Promise<void>;
}

export function probePortFromEnv(env: Record<string, string | undefined> = process.env): number | undefined {
  const raw = env.SLIPWAY_PROBE_PORT;
  if (raw === undefined || raw === '') return undefined;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`SLIPWAY_PROBE_PORT=${JSON.stringify(raw)} is not a port number (0-65535)`);
  return port;
}

export async function serveProbes(port: number, readiness: () => Readiness, metrics?: Registry): Promise<Probes> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/metrics' && metrics) {
      metrics.metrics().then(
        (body) => res.writeHead(200, { 'content-type': metrics.contentType }).end(body),
        (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${err instanceof Error ? err.message : String(err)}\n`),
      );
      return;
    }
    if (path === '/healthz' || path === '/livez') {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n');
      return;
    }
    if (path === '/readyz') {
      const r = readiness();
      res.writeHead(r.ready ? 200 : 503, { 'content-type': 'text/plain' }).end(`${r.ready ? 'ok' : 'not ready'}: ${r.reason}\n`);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
