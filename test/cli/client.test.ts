/**
 * The builder's daily commands, run as a builder runs them (`node bin/ferry.js …`, the key in
 * FERRY_API_KEY), against the real stack: deploy with its diff, the lists, a read followed in its
 * log, pause and resume. Each fails non-zero with the problem's detail, and documents itself.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { eventually } from '../installations/support.js';

let sandbox: Sandbox;
let stack: TestStack;
let receiver: WebhookReceiver;
const dir = mkdtempSync(join(tmpdir(), 'ferry-cli-'));
const manifestFile = join(dir, 'amp.yaml');
const groupRef = 'acme';

const manifest = (schedule: string) => `specVersion: 1.0.0
integrations:
  - name: crm-cli
    provider: sandboxApiKey
    read:
      objects:
        - objectName: contacts
          destination: records
          schedule: '${schedule}'
          requiredFields:
            - fieldName: email
`;

/** `ferry <args>` in a child process (asynchronously: the stack answers from this one). */
function ferry(
  args: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/ferry.js', ...args],
      {
        encoding: 'utf8',
        timeout: 60_000,
        env: {
          ...process.env,
          FERRY_API_KEY: stack.project.apiKey,
          FERRY_PROJECT: stack.project.name,
          ...env,
        },
      },
      (error, stdout, stderr) =>
        resolve({ status: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}
const apiUrl = () => ['--api-url', new URL(stack.urls.api).origin];

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: 40 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  resetConfig();
  stack = await startTestStack({ worker: true });
  process.env.FERRY_PUBLIC_API_URL = new URL(stack.urls.api).origin;
  resetConfig();
  receiver = await WebhookReceiver.start();
  const created = await stack.api('POST', `/projects/${stack.project.name}/destinations`, {
    body: { name: 'records', type: 'webhook', metadata: { url: receiver.url() } },
  });
  expect(created.status).toBe(201);
}, 90_000);

afterAll(async () => {
  await stack?.close();
  await receiver?.stop();
  await sandbox?.close();
  delete process.env.FERRY_SANDBOX_URL;
  delete process.env.FERRY_PUBLIC_API_URL;
});

describe('ferry deploy', () => {
  it('prints the diff against the live revision; --dry-run deploys nothing', async () => {
    writeFileSync(manifestFile, manifest('0 0 1 1 *'));
    const dry = await ferry(['deploy', manifestFile, '--dry-run', ...apiUrl()]);
    expect(dry).toMatchObject({ status: 0, stderr: 'dry run: nothing deployed\n' });
    expect(dry.stdout).toMatch(/^crm-cli: new\n/);
    expect(dry.stdout).toContain('+ name: crm-cli');
    const absent = await stack.api('GET', `/projects/${stack.project.name}/integrations/crm-cli`);
    expect(absent.status).toBe(404);

    const first = await ferry(['deploy', manifestFile, ...apiUrl()]);
    expect(first.status).toBe(0);
    expect(first.stderr).toMatch(/^deployed crm-cli: revision [0-9a-f-]{36}\n$/);
    const live = await stack.api('GET', `/projects/${stack.project.name}/integrations/crm-cli`);
    expect(live.status).toBe(200);

    const again = await ferry(['deploy', manifestFile, '--dry-run', ...apiUrl()]);
    expect(again.stdout).toBe(`crm-cli: unchanged (live revision ${live.body.latestRevision.id})\n`);

    writeFileSync(manifestFile, manifest('0 0 2 1 *'));
    const changed = await ferry(['deploy', manifestFile, ...apiUrl()]);
    expect(changed.status).toBe(0);
    expect(changed.stdout).toContain(`crm-cli: changed (live revision ${live.body.latestRevision.id})`);
    expect(changed.stdout).toMatch(/^- +schedule: 0 0 1 1 \*$/m);
    expect(changed.stdout).toMatch(/^\+ +schedule: 0 0 2 1 \*$/m);
    const after = await stack.api('GET', `/projects/${stack.project.name}/integrations/crm-cli`);
    expect(after.body.latestRevision.id).not.toBe(live.body.latestRevision.id);
  }, 60_000);

  it('fails non-zero with the problem: a manifest error with its line, and what only the server knows', async () => {
    const broken = join(dir, 'broken.yaml');
    writeFileSync(broken, manifest('0 0 1 1 *').replace('objectName: contacts', 'objectName: [contacts'));
    const local = await ferry(['deploy', broken, '--dry-run', ...apiUrl()]);
    expect(local.status).toBe(1);
    expect(local.stderr).toMatch(/line \d+/);

    const unknownDestination = join(dir, 'nowhere.yaml');
    writeFileSync(
      unknownDestination,
      manifest('0 0 1 1 *').replace('destination: records', 'destination: nowhere'),
    );
    const refused = await ferry(['deploy', unknownDestination, ...apiUrl()]);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/PUT .*integrations:batch failed: 400/);
    expect(refused.stderr).toContain('nowhere');

    const missing = await ferry(['deploy', join(dir, 'absent.yaml'), ...apiUrl()]);
    expect(missing).toMatchObject({ status: 1, stderr: expect.stringContaining('ENOENT') });
  }, 60_000);
});

describe('the lists, a read followed in its log, pause and resume', () => {
  let installationId: string;

  beforeAll(async () => {
    const connected = await stack.api('POST', `/projects/${stack.project.name}/connections:generate`, {
      body: { provider: 'sandboxApiKey', groupRef, consumerRef: 'ada', apiKey: 'sandbox-demo-key' },
    });
    expect(connected.status).toBe(201);
    // No optional fields in the manifest: no selectedFields to send.
    const installed = await stack.api(
      'POST',
      `/projects/${stack.project.name}/integrations/crm-cli/installations`,
      {
        body: {
          groupRef,
          config: {
            content: {
              provider: 'sandboxApiKey',
              read: { objects: { contacts: { objectName: 'contacts' } } },
            },
          },
        },
      },
    );
    expect(installed.status).toBe(201);
    installationId = installed.body.id;
  });

  it('sends a test message to a destination, exiting 1 when it is not delivered', async () => {
    const delivered = await ferry(['destinations', 'test', 'records', ...apiUrl()]);
    expect(delivered).toMatchObject({ status: 0 });
    expect(delivered.stdout).toMatch(
      /^delivered to records \(message msg_test_[0-9a-f]{32}\): HTTP 200, \d+ ms/,
    );
    expect(receiver.requests.at(-1)!.body).toMatchObject({ notificationType: 'destination.test' });
    receiver.respond(() => ({ status: 500 }));
    try {
      const refused = await ferry(['destinations', 'test', 'records', '--json', ...apiUrl()]);
      expect(refused.status).toBe(1);
      expect(JSON.parse(refused.stdout)).toMatchObject({ delivered: false, status: 500 });
    } finally {
      receiver.respond(() => ({ status: 200 }));
    }
    const missing = await ferry(['destinations', 'test', 'nowhere', ...apiUrl()]);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toMatch(/:test failed: 404 /);
  }, 60_000);

  it('lists integrations, installations, connections and destinations as tables, and as JSON', async () => {
    const expected = {
      integrations: [/^NAME +PROVIDER +REVISION +UPDATED$/m, /^crm-cli +sandboxApiKey +[0-9a-f-]{36} /m],
      installations: [
        /^ID +INTEGRATION +GROUP +HEALTH/,
        new RegExp(`^${installationId} +crm-cli +acme +healthy`, 'm'),
      ],
      connections: [
        /^ID +PROVIDER +GROUP +CONSUMER +STATUS/,
        /^[0-9a-f-]{36} +sandboxApiKey +acme +ada +working/m,
      ],
      destinations: [
        /^NAME +TYPE +STATE +WHERE$/m,
        /^records +webhook +enabled +http:\/\/127\.0\.0\.1:\d+\//m,
      ],
    };
    // At once: each is a process of its own.
    const resources = Object.keys(expected) as (keyof typeof expected)[];
    const [tables, jsons] = await Promise.all([
      Promise.all(resources.map((resource) => ferry([resource, 'list', ...apiUrl()]))),
      Promise.all(resources.map((resource) => ferry([resource, 'list', '--json', ...apiUrl()]))),
    ]);
    for (const [index, resource] of resources.entries()) {
      const [header, row] = expected[resource];
      const listed = tables[index];
      expect({ resource, status: listed.status, stderr: listed.stderr }).toEqual({
        resource,
        status: 0,
        stderr: '',
      });
      expect(listed.stdout).toMatch(header);
      expect(listed.stdout).toMatch(row);
      expect(JSON.parse(jsons[index].stdout)).toHaveLength(1);
    }
    const byGroup = await ferry(['installations', 'list', '--group', 'nobody', '--json', ...apiUrl()]);
    expect(JSON.parse(byGroup.stdout)).toEqual([]);
  }, 60_000);

  it('reads an object now and follows its log until it ends', async () => {
    const since = new Date(Date.now() - 30 * 86_400_000).toISOString();
    const read = await ferry([
      'read',
      'crm-cli',
      'contacts',
      '--group',
      groupRef,
      '--since',
      since,
      ...apiUrl(),
    ]);
    expect(read.status).toBe(0);
    const { operationId } = JSON.parse(read.stdout);
    expect(read.stderr).toContain(`ferry operations logs ${operationId} --follow`);
    const followed = await ferry([
      'operations',
      'logs',
      operationId,
      '--follow',
      '--interval',
      '0.2',
      ...apiUrl(),
    ]);
    expect(followed.status).toBe(0);
    expect(followed.stderr).toBe(`operation ${operationId}: success\n`);
    const lines = followed.stdout.trim().split('\n');
    expect(lines.length).toBeGreaterThan(1);
    expect(lines[0]).toMatch(/^\d{4}-\d\d-\d\dT\S+ +(INFO|DEBUG) /);
    // Not following: the same log, once.
    const once = await ferry(['operations', 'logs', operationId, ...apiUrl()]);
    expect(once.stdout).toBe(followed.stdout);
  }, 90_000);

  it('pauses and resumes a group’s reads, as the workflow then says', async () => {
    const schedule = async () =>
      (
        await stack.api(
          'GET',
          `/projects/${stack.project.name}/integrations/crm-cli/installations/${installationId}/schedule`,
        )
      ).body;
    const paused = await ferry(['pause', 'crm-cli', '--group', groupRef, '--note', 'holiday', ...apiUrl()]);
    expect(paused.status).toBe(0);
    expect(JSON.parse(paused.stdout)).toEqual({ installationId, paused: 'all' });
    await eventually(async () => (await schedule()).objects?.[0]?.paused === true);
    const resumed = await ferry([
      'resume',
      'crm-cli',
      '--group',
      groupRef,
      '--object',
      'contacts',
      ...apiUrl(),
    ]);
    expect(resumed.status).toBe(0);
    await eventually(async () => (await schedule()).objects?.[0]?.paused === false);

    const unknown = await ferry([
      'pause',
      'crm-cli',
      '--group',
      groupRef,
      '--object',
      'unicorns',
      ...apiUrl(),
    ]);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(
      /:pause failed: 400 .*\n.*"unicorns" is not an object this installation reads/,
    );
    const noGroup = await ferry(['pause', 'crm-cli', '--group', 'nobody', ...apiUrl()]);
    expect(noGroup).toMatchObject({
      status: 1,
      stderr: 'ferry: group "nobody" has no installation of "crm-cli"\n',
    });
  }, 60_000);
});

describe('every client command', () => {
  const commands = [
    ['deploy'],
    ['integrations', 'list'],
    ['installations', 'list'],
    ['connections', 'list'],
    ['destinations', 'list'],
    ['destinations', 'test'],
    ['operations', 'logs'],
    ['read'],
    ['pause'],
    ['resume'],
  ];

  it('has --help with an example', async () => {
    // At once: each is a process of its own.
    const helps = await Promise.all(commands.map((command) => ferry([...command, '--help'])));
    for (const [index, command] of commands.entries()) {
      const help = helps[index];
      expect({ command, status: help.status }).toEqual({ command, status: 0 });
      expect(help.stdout).toContain(`Usage: ferry ${command.join(' ')}`);
      expect(help.stdout).toMatch(
        new RegExp(`Example:\\n  FERRY_API_KEY=\\.\\.\\. ferry ${command.join(' ')}`),
      );
      expect(help.stdout).toContain('--api-url');
    }
  }, 60_000);

  it('fails non-zero naming the problem: no key, a wrong key, an unreachable host, a missing argument', async () => {
    const noKey = await ferry(['integrations', 'list', ...apiUrl()], { FERRY_API_KEY: '' });
    expect(noKey).toMatchObject({ status: 1, stderr: expect.stringContaining('FERRY_API_KEY is not set') });
    const wrongKey = await ferry(['destinations', 'list', ...apiUrl()], { FERRY_API_KEY: 'ferry_not_a_key' });
    expect(wrongKey.status).toBe(1);
    expect(wrongKey.stderr).toMatch(/GET .*\/destinations failed: 401 /);
    const unreachable = await ferry(['connections', 'list', '--api-url', 'http://127.0.0.1:9']);
    expect(unreachable).toMatchObject({ status: 1, stderr: expect.stringContaining('cannot reach') });
    const notFound = await ferry(['operations', 'logs', '00000000-0000-4000-8000-000000000000', ...apiUrl()]);
    expect(notFound.status).toBe(1);
    expect(notFound.stderr).toMatch(/failed: 404 /);
    const noGroup = await ferry(['read', 'crm-cli', 'contacts', ...apiUrl()]);
    expect(noGroup).toMatchObject({ status: 1, stderr: 'ferry: --group <ref> is required\n' });
    const unknownOption = await ferry(['integrations', 'list', '--colour', ...apiUrl()]);
    expect(unknownOption.status).toBe(1);
    expect(unknownOption.stderr).toContain('--colour');
  }, 60_000);
});
