/**
 * The production deployment files, checked by reading them: no Docker engine runs in CI, so this proves the
 * wiring (images, ports, environment, start order, search attributes, dynamic config) that `docker compose up`
 * would otherwise only reveal on a server.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { searchAttributeNames } from '../../src/temporal/search-attributes.js';
import { loadConfig } from '../../src/config.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const read = (file: string) => readFileSync(join(root, file), 'utf8');

type Service = {
  image?: string;
  build?: string | { context: string };
  command?: string | string[];
  entrypoint?: string | string[];
  environment?: Record<string, string | number | boolean | null> | string[];
  ports?: (string | number | { target: number; published?: string | number })[];
  volumes?: (string | { source: string; target: string })[];
  depends_on?: string[] | Record<string, { condition?: string }>;
  healthcheck?: { test?: string | string[]; disable?: boolean };
};

const composeText = read('docker-compose.yml');
// `merge: true` resolves `<<:` keys the way docker compose does.
const compose = parse(composeText, { merge: true }) as { services: Record<string, Service> };
const services = compose.services;

function service(name: string): Service {
  const found = services[name];
  if (!found) throw new Error(`docker-compose.yml has no service "${name}"`);
  return found;
}

/** Environment as a map, whichever of the two compose forms the file uses. */
function environment(name: string): Record<string, string> {
  const env = service(name).environment ?? {};
  if (Array.isArray(env)) {
    return Object.fromEntries(env.map((entry) => [entry.split('=')[0], entry.slice(entry.indexOf('=') + 1)]));
  }
  return Object.fromEntries(Object.entries(env).map(([key, value]) => [key, String(value ?? '')]));
}

/** `depends_on` as service -> condition (the short list form means `service_started`). */
function dependencies(name: string): Record<string, string> {
  const deps = service(name).depends_on ?? {};
  if (Array.isArray(deps)) return Object.fromEntries(deps.map((dep) => [dep, 'service_started']));
  return Object.fromEntries(
    Object.entries(deps).map(([dep, spec]) => [dep, spec.condition ?? 'service_started']),
  );
}

/** Published ports as `host:container` pairs, host address dropped. */
function ports(name: string): string[] {
  return (service(name).ports ?? []).map((port) => {
    if (typeof port === 'object') return `${port.published ?? ''}:${port.target}`;
    const parts = String(port).split(':');
    return parts.slice(-2).join(':');
  });
}

function commandText(name: string): string {
  const command = service(name).command ?? '';
  return Array.isArray(command) ? command.join(' ') : command;
}

const ferryServices = ['ferry-migrate', 'ferry-api', 'ferry-worker'];

describe('docker-compose.yml', () => {
  it('defines every service of the deployment', () => {
    expect(Object.keys(services).sort()).toEqual(
      [
        'postgresql',
        'temporal',
        'temporal-admin-tools',
        'temporal-ui',
        'ferry-migrate',
        'ferry-api',
        'ferry-worker',
      ].sort(),
    );
  });

  it('pins each third-party image to a version', () => {
    expect(service('postgresql').image).toMatch(/^postgres:16(\b|$)/);
    expect(service('temporal').image).toMatch(/^temporalio\/auto-setup:1\.2\d\.\d+$/);
    expect(service('temporal-ui').image).toMatch(/^temporalio\/ui:\d+\.\d+\.\d+$/);
    expect(service('temporal-admin-tools').image).toMatch(/^temporalio\/admin-tools:\d/);
    // The admin tools speak the server's API version: same release.
    const serverVersion = service('temporal').image!.split(':')[1];
    expect(service('temporal-admin-tools').image!.split(':')[1].startsWith(serverVersion)).toBe(true);
  });

  it('publishes Temporal on 7233, its UI on 8233 and the api on 8080-8082', () => {
    expect(ports('temporal')).toContain('7233:7233');
    expect(ports('temporal-ui')).toContain('8233:8080');
    expect(ports('ferry-api')).toEqual(expect.arrayContaining(['8080:8080', '8081:8081', '8082:8082']));
    expect(ports('postgresql')).toEqual([]);
  });

  it('keeps PostgreSQL healthy-checked and Temporal on it', () => {
    expect(JSON.stringify(service('postgresql').healthcheck?.test)).toContain('pg_isready');
    expect(service('postgresql').volumes?.length).toBeGreaterThan(0);
    const env = environment('temporal');
    expect(env.DB).toBe('postgres12');
    expect(env.POSTGRES_SEEDS).toBe('postgresql');
    expect(dependencies('temporal')).toMatchObject({ postgresql: 'service_healthy' });
    expect(environment('temporal-ui').TEMPORAL_ADDRESS).toBe('temporal:7233');
    expect(environment('temporal-ui').TEMPORAL_CORS_ORIGINS).toBeTruthy();
  });

  it('mounts a dynamic config file that exists and parses', () => {
    const path = posix.join('/etc/temporal', environment('temporal').DYNAMIC_CONFIG_FILE_PATH);
    const mount = (service('temporal').volumes ?? [])
      .map((volume) =>
        typeof volume === 'string'
          ? { source: volume.split(':')[0], target: volume.split(':')[1] }
          : { source: volume.source, target: volume.target },
      )
      .find((volume) => path.startsWith(`${volume.target}/`));
    expect(mount).toBeDefined();
    const file = join(root, mount!.source, posix.relative(mount!.target, path));
    expect(existsSync(file)).toBe(true);

    const config = parse(readFileSync(file, 'utf8')) as Record<
      string,
      { value: unknown; constraints?: object }[]
    >;
    for (const [key, values] of Object.entries(config)) {
      expect({ key, isList: Array.isArray(values) && values.length > 0 }).toEqual({ key, isList: true });
      for (const entry of values) expect(entry).toHaveProperty('value');
    }
    // SQL persistence stores ids in VARCHAR(255).
    expect(config['limit.maxIDLength'][0].value).toBe(255);
    expect(config['frontend.enableUpdateWorkflowExecution'][0].value).toBe(true);
  });

  it('registers every Ferry search attribute as Keyword in the namespace', () => {
    const admin = service('temporal-admin-tools');
    expect(dependencies('temporal-admin-tools')).toHaveProperty('temporal');
    expect(environment('temporal-admin-tools').TEMPORAL_ADDRESS).toBe('temporal:7233');
    const script = [admin.entrypoint, admin.command].flat().join(' ');
    expect(script).toContain('temporal operator namespace create');
    expect(script).toContain('temporal operator search-attribute create');
    expect(script).toContain('--type Keyword');
    for (const name of searchAttributeNames) expect(script).toContain(name);
  });

  it("sets the namespace's retention on every start, by default as long as Ferry keeps logs", () => {
    const admin = service('temporal-admin-tools');
    const script = [admin.entrypoint, admin.command].flat().join(' ');
    expect(script).toContain(
      'temporal operator namespace update --namespace "$$TEMPORAL_NAMESPACE" --retention "$$TEMPORAL_NAMESPACE_RETENTION"',
    );
    const days = loadConfig({ ...process.env, FERRY_RETENTION_TEMPORAL_DAYS: '' }).retention.temporalDays;
    expect(environment('temporal-admin-tools').TEMPORAL_NAMESPACE_RETENTION).toBe(
      `\${TEMPORAL_NAMESPACE_RETENTION:-${days * 24}h}`,
    );
  });

  it('runs migrate, server and worker from the one Ferry image', () => {
    expect(commandText('ferry-migrate')).toBe('migrate');
    expect(commandText('ferry-api')).toBe('server');
    expect(commandText('ferry-worker')).toBe('worker');
    for (const name of ferryServices) {
      const build = service(name).build;
      expect(typeof build === 'string' ? build : build?.context).toBe('.');
    }
  });

  it('gives Ferry its database, Temporal and production settings', () => {
    for (const name of ferryServices) {
      const env = environment(name);
      expect(env.FERRY_ENV).toBe('production');
      expect(env.DATABASE_URL).toMatch(/^postgres:\/\/.+@postgresql:5432\//);
      expect(env.TEMPORAL_ADDRESS).toBe('temporal:7233');
      expect(env.TEMPORAL_NAMESPACE).toBeTruthy();
      expect(env.FERRY_TASK_QUEUE).toBeTruthy();
    }
  });

  it('requires the secrets instead of defaulting them', () => {
    for (const name of ferryServices) {
      const env = environment(name);
      for (const secret of ['FERRY_ENCRYPTION_KEY', 'FERRY_BUILDER_TOKEN_SECRET']) {
        expect({ name, secret, value: env[secret] }).toEqual({
          name,
          secret,
          value: expect.stringMatching(new RegExp(`^\\$\\{${secret}:\\?[^}]+\\}$`)),
        });
      }
    }
  });

  it('starts Ferry after the migration and the Temporal setup', () => {
    expect(dependencies('ferry-migrate')).toMatchObject({ postgresql: 'service_healthy' });
    expect(dependencies('ferry-api')).toMatchObject({
      'ferry-migrate': 'service_completed_successfully',
      temporal: expect.any(String),
    });
    expect(dependencies('ferry-worker')).toMatchObject({
      'ferry-migrate': 'service_completed_successfully',
      'temporal-admin-tools': 'service_completed_successfully',
    });
    // One-shot services must not be restarted after they exit.
    for (const name of ['ferry-migrate', 'temporal-admin-tools']) {
      expect((service(name) as { restart?: string }).restart ?? 'no').toBe('no');
    }
  });

  it('uses only well-formed interpolations, so no shell variable is substituted by compose', () => {
    // Compose interpolates every string value (comments are not values). `$$` is a literal dollar; every other
    // `$` must open `${NAME}`, `${NAME:-default}` or `${NAME:?message}`.
    const strings: string[] = [];
    const collect = (node: unknown): void => {
      if (typeof node === 'string') strings.push(node);
      else if (Array.isArray(node)) node.forEach(collect);
      else if (node && typeof node === 'object')
        Object.entries(node).forEach(([key, value]) => collect([key, value]));
    };
    collect(compose);
    const stray = strings.filter((value) =>
      /\$(?!\{[A-Za-z_][A-Za-z0-9_]*(?::?[-?][^}]*)?\})/.test(value.replace(/\$\$/g, '')),
    );
    expect(stray).toEqual([]);
  });
});

describe('Dockerfile', () => {
  // Continuation lines joined, comments dropped: one instruction per entry.
  const instructions = read('Dockerfile')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'));
  const all = (keyword: string) =>
    instructions
      .filter((line) => line.toUpperCase().startsWith(`${keyword} `))
      .map((line) => line.slice(keyword.length + 1));

  it('builds on Node 20', () => {
    expect(all('FROM')[0]).toMatch(/^node:20\b/);
  });

  it('installs with npm ci from the lockfile', () => {
    expect(all('COPY').join('\n')).toContain('package-lock.json');
    expect(all('RUN').some((run) => /\bnpm ci\b/.test(run))).toBe(true);
  });

  it('copies the sources tsx runs', () => {
    const copied = all('COPY').join('\n');
    for (const dir of ['bin/', 'src/', 'workflows/', 'activities/', 'tsconfig.json'])
      expect(copied).toContain(dir);
  });

  it('bundles the workflow code once, for workers to load instead of bundling at every start', () => {
    expect(
      all('RUN').some((run) => /bin\/ferry\.js bundle-workflows --out \/app\/workflow-bundle\.js/.test(run)),
    ).toBe(true);
    expect(all('ENV').join(' ')).toContain('FERRY_WORKFLOW_BUNDLE=/app/workflow-bundle.js');
  });

  it('runs as a non-root user', () => {
    const user = all('USER').at(-1);
    expect(user).toBeDefined();
    expect(['root', '0', '0:0']).not.toContain(user);
  });

  it('starts bin/ferry.js and checks the api health endpoint', () => {
    expect([...all('ENTRYPOINT'), ...all('CMD')].join(' ')).toContain('bin/ferry.js');
    expect(all('HEALTHCHECK').join(' ')).toContain('http://127.0.0.1:8080/v1/health');
  });
});

describe('.dockerignore', () => {
  it('keeps local state, dependencies and history out of the build context', () => {
    const entries = read('.dockerignore')
      .split('\n')
      .map((line) => line.trim());
    for (const entry of ['node_modules', '.data', '.tools', '.git', 'coverage'])
      expect(entries).toContain(entry);
  });
});
