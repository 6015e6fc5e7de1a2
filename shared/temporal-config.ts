// Temporal's own client configuration, as the temporal CLI and the SDKs' envconfig read it: a profile
// from the TOML file (TEMPORAL_CONFIG_FILE, else ~/.config/temporalio/temporal.toml; TEMPORAL_PROFILE,
// else "default"), then the standard TEMPORAL_* variables over it. Only what a client connection
// needs: address, namespace, API key, TLS. The TOML reader knows tables, strings, booleans, numbers.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

type Env = Record<string, string | undefined>;

export interface ClientProfile {
  address?: string;
  namespace?: string;
  apiKey?: string;
  tls?: {
    disabled?: boolean;
    clientCertPath?: string;
    clientKeyPath?: string;
    clientCertData?: string;
    clientKeyData?: string;
    serverCaCertPath?: string;
    serverCaCertData?: string;
    serverName?: string;
  };
}

/** A small TOML subset: [a.b] tables, key = "string" | 'literal' | true | false | number, # comments. */
export function parseToml(text: string, file = 'TOML'): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  let table = root;
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.replace(/^\s+|\s+$/g, '');
    if (!line || line.startsWith('#')) return;
    const header = /^\[([^\]]+)\]$/.exec(line);
    if (header) {
      table = root;
      for (const k of header[1]!.split('.').map((p) => p.trim().replace(/^"|"$/g, ''))) table = (table[k] ??= {}) as Record<string, unknown>;
      return;
    }
    const kv = /^([A-Za-z0-9_-]+|"[^"]*")\s*=\s*(.+?)\s*(#.*)?$/.exec(line);
    if (!kv) throw new Error(`${file}:${i + 1}: cannot read "${line}"`);
    const v = kv[2]!;
    const value = /^"(.*)"$/.test(v) ? (JSON.parse(v) as string) : /^'(.*)'$/.test(v) ? v.slice(1, -1) : v === 'true' ? true : v === 'false' ? false : /^-?[0-9.]+$/.test(v) ? Number(v) : undefined;
    if (value === undefined) throw new Error(`${file}:${i + 1}: unsupported value ${v}`);
    table[kv[1]!.replace(/^"|"$/g, '')] = value;
  });
  return root;
}

const str = (o: Record<string, unknown> | undefined, k: string) => (typeof o?.[k] === 'string' ? (o[k] as string) : undefined);

/** The profile named by TEMPORAL_PROFILE (or "default") from the config file; {} when there is no file. */
export function fileProfile(env: Env = process.env): ClientProfile {
  const file = env.TEMPORAL_CONFIG_FILE || join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'temporalio', 'temporal.toml');
  const name = env.TEMPORAL_PROFILE || 'default';
  if (!existsSync(file)) {
    if (env.TEMPORAL_CONFIG_FILE) throw new Error(`TEMPORAL_CONFIG_FILE ${file} not found`);
    if (env.TEMPORAL_PROFILE) throw new Error(`TEMPORAL_PROFILE ${name}: no config file ${file}`);
    return {};
  }
  const profiles = parseToml(readFileSync(file, 'utf8'), file).profile as Record<string, Record<string, unknown>> | undefined;
  const p = profiles?.[name];
  if (!p) {
    if (env.TEMPORAL_PROFILE) throw new Error(`TEMPORAL_PROFILE ${name}: no [profile.${name}] in ${file}`);
    return {};
  }
  const tls = p.tls as Record<string, unknown> | undefined;
  return {
    address: str(p, 'address'),
    namespace: str(p, 'namespace'),
    apiKey: str(p, 'api_key'),
    tls: tls && {
      disabled: tls.disabled === true,
      clientCertPath: str(tls, 'client_cert_path'),
      clientKeyPath: str(tls, 'client_key_path'),
      clientCertData: str(tls, 'client_cert_data'),
      clientKeyData: str(tls, 'client_key_data'),
      serverCaCertPath: str(tls, 'server_ca_cert_path'),
      serverCaCertData: str(tls, 'server_ca_cert_data'),
      serverName: str(tls, 'server_name'),
    },
  };
}

/**
 * The profile with the standard variables over it. TEMPORAL_TLS_CERT / _KEY / _CA, Slipway's names
 * before it read Temporal's, are still read (after the standard ones).
 */
export function clientProfile(env: Env = process.env): ClientProfile {
  const p = fileProfile(env);
  const t = p.tls ?? {};
  const tlsEnv = env.TEMPORAL_TLS;
  const tls = {
    ...t,
    ...(tlsEnv !== undefined && tlsEnv !== '' ? { disabled: !/^(true|1)$/i.test(tlsEnv) } : {}),
    clientCertPath: env.TEMPORAL_TLS_CLIENT_CERT_PATH || env.TEMPORAL_TLS_CERT || t.clientCertPath,
    clientKeyPath: env.TEMPORAL_TLS_CLIENT_KEY_PATH || env.TEMPORAL_TLS_KEY || t.clientKeyPath,
    clientCertData: env.TEMPORAL_TLS_CLIENT_CERT_DATA || t.clientCertData,
    clientKeyData: env.TEMPORAL_TLS_CLIENT_KEY_DATA || t.clientKeyData,
    serverCaCertPath: env.TEMPORAL_TLS_SERVER_CA_CERT_PATH || env.TEMPORAL_TLS_CA || t.serverCaCertPath,
    serverCaCertData: env.TEMPORAL_TLS_SERVER_CA_CERT_DATA || t.serverCaCertData,
    serverName: env.TEMPORAL_TLS_SERVER_NAME || t.serverName,
  };
  return {
    address: env.TEMPORAL_ADDRESS || p.address,
    namespace: env.TEMPORAL_NAMESPACE || p.namespace,
    apiKey: env.TEMPORAL_API_KEY || p.apiKey,
    tls,
  };
}
