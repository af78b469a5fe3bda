/**
 * The README's quick start, run as written against the real stack: its webhook one-liner, then its
 * shell commands (curl), with only the key, the URLs and the project's name swapped for the test's.
 * Records must arrive at that webhook. Every manifest of `examples/` must deploy as-is, and each
 * does what its comment says once installed: reads, writes, change events, proxying.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { resetConfig } from '../../src/config.js';
import { schemaIssues } from '../../src/core/validation.js';
import { ResultMessageSchema } from '../../src/schemas/messages.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { request, startTestStack, type TestStack } from '../support/stack.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { eventually, freePort } from '../installations/support.js';

const root = process.cwd();
const examplesDir = join(root, 'examples');
const exampleFiles = readdirSync(examplesDir).filter((file) => file.endsWith('.yaml'));

/** The quick start's `sh` code blocks, in order. */
function quickStartBlocks(): string[] {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const start = readme.indexOf('\n## Quick start');
  expect(start).toBeGreaterThan(0);
  const end = readme.indexOf('\n## ', start + 1);
  const section = readme.slice(start, end);
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]);
}

function run(command: string, env: NodeJS.ProcessEnv): ChildProcess & { output: () => string } {
  // A process group of its own, so the whole of it (sh and what it started) can be stopped.
  const child = spawn('sh', ['-c', command], { cwd: root, env: { ...process.env, ...env }, detached: true });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  return Object.assign(child, { output: () => output });
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) =>
    child.exitCode !== null ? resolve(child.exitCode) : child.on('close', (code) => resolve(code)),
  );

let stack: TestStack;
let sandbox: Sandbox;
let tee: WebhookReceiver;
let hook: ReturnType<typeof run> | undefined;
let commandsOutput = '';

beforeAll(async () => {
  // Fewer contacts than the default million: the two days the read example backfills hold ~50.
  sandbox = await startSandbox({ port: 0, contacts: 20_000 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  stack = await startTestStack({ worker: true });
  // The change-event URL Ferry registers at the sandbox names this test's api listener.
  process.env.FERRY_PUBLIC_API_URL = new URL(stack.urls.api).origin;
  resetConfig();
}, 90_000);

afterAll(async () => {
  if (hook?.pid && hook.exitCode === null) {
    process.kill(-hook.pid, 'SIGTERM');
    await exited(hook);
  }
  await stack?.close();
  await sandbox?.close();
  await tee?.stop();
  delete process.env.FERRY_SANDBOX_URL;
  delete process.env.FERRY_PUBLIC_API_URL;
});

describe('the README quick start', () => {
  it('runs as written: records arrive at its webhook, shaped as the OpenAPI document says', async () => {
    const [receiverBlock, commandsBlock, ...rest] = quickStartBlocks();
    expect(rest).toEqual([]);

    // The README's webhook, on a free port instead of 9000.
    const hookPort = await freePort();
    expect(receiverBlock).toContain('.listen(9000)');
    hook = run(receiverBlock.replace('.listen(9000)', `.listen(${hookPort})`), {});
    // Connect only: the one-liner expects JSON, so a probe request would stop it.
    await eventually(
      () =>
        new Promise<boolean>((resolve) => {
          const socket = connect(hookPort, '127.0.0.1');
          socket.once('connect', () => {
            socket.destroy();
            resolve(true);
          });
          socket.once('error', () => resolve(false));
        }),
    );

    // Ferry delivers to a recording relay in front of it, so the test also sees the messages whole.
    tee = await WebhookReceiver.start();
    tee.respond(async (received) => {
      const forwarded = await fetch(`http://127.0.0.1:${hookPort}/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: received.rawBody,
      });
      return { status: forwarded.status };
    });

    // The commands, with the placeholders of their first lines set to the test's values.
    const placeholders = /^(KEY|API|HOOK)=.*$/gm;
    expect(commandsBlock.match(placeholders)).toHaveLength(3);
    const commands = commandsBlock
      .replace(placeholders, '')
      .replaceAll('/projects/development/', `/projects/${stack.project.name}/`);
    const shell = run(`set -e\n${commands}`, {
      KEY: stack.project.apiKey,
      API: stack.urls.api,
      HOOK: tee.url(),
    });
    expect([await exited(shell), shell.output()]).toEqual([0, expect.any(String)]);
    commandsOutput = shell.output();
    // Each `api` call printed one JSON answer; none of them is a problem.
    const answers = commandsOutput
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(answers).toHaveLength(1 + exampleFiles.length + 2);
    // A problem carries a numeric status (a connection's `status` is a word).
    for (const answer of answers)
      expect([typeof answer.status, answer.title]).not.toEqual(['number', expect.anything()]);
    expect(answers.at(-1)).toMatchObject({ config: { content: { read: { objects: { contacts: {} } } } } });

    // The backfill's records reach the webhook, which prints one line per message.
    await tee.waitFor(
      () => tee.accepted().some((message) => message.body.action === 'read'),
      60_000,
      'records',
    );
    await eventually(async () => /^read contacts \d+ \{/m.test(hook!.output()), 20_000);
    const reads = tee.accepted().filter((message) => message.body.action === 'read');
    for (const message of reads) {
      expect(schemaIssues(ResultMessageSchema, message.body, 'body')).toEqual([]);
      expect(message.body).toMatchObject({ objectName: 'contacts', groupRef: 'acme', readType: 'backfill' });
    }
    const [first] = reads[0].body.result;
    expect(Object.keys(first.fields).sort()).toEqual(['company', 'email', 'firstname']);
    expect(first.mappedFields).toHaveProperty('surname');
    const printed = /^read contacts (\d+) (\{.*\})$/m.exec(hook.output())!;
    expect(Number(printed[1])).toBeGreaterThan(0);
    expect(JSON.parse(printed[2])).toHaveProperty('fields.email');
  }, 180_000);

  it('deployed every manifest of examples/ as it is written', async () => {
    const listed = await stack.api('GET', `/projects/${stack.project.name}/integrations`);
    expect(listed.status).toBe(200);
    const deployed = new Map(
      (listed.body as { name: string; latestRevision: { content: unknown } }[]).map((integration) => [
        integration.name,
        integration.latestRevision.content,
      ]),
    );
    expect(exampleFiles.sort()).toEqual(['proxy.yaml', 'read.yaml', 'subscribe.yaml', 'write.yaml']);
    for (const file of exampleFiles) {
      const manifest = parse(readFileSync(join(examplesDir, file), 'utf8'));
      for (const integration of manifest.integrations) {
        expect([file, deployed.get(integration.name)]).toEqual([file, expect.objectContaining(integration)]);
      }
    }
  });

  it('write.yaml: installed, it creates a contact in the sandbox CRM through the write host', async () => {
    const base = `/projects/${stack.project.name}/integrations/crm-write`;
    const installed = await stack.api('POST', `${base}/installations`, {
      body: {
        groupRef: 'acme',
        config: {
          content: {
            provider: 'sandboxApiKey',
            write: { objects: { contacts: { objectName: 'contacts' } } },
          },
        },
      },
    });
    expect(installed.status).toBe(201);
    const written = await stack.write('POST', `${base}/objects/contacts`, {
      body: {
        groupRef: 'acme',
        type: 'create',
        mode: 'synchronous',
        record: { email: 'quick@example.com', firstName: 'Quick' },
      },
    });
    expect(written.status).toBe(200);
    const id = written.body.result.recordId;
    const found = await fetch(`${sandbox.url}/api/v1/contacts/${id}`, {
      headers: { 'x-api-key': 'sandbox-demo-key' },
    });
    expect(found.status).toBe(200);
    expect(await found.json()).toMatchObject({ email: 'quick@example.com', firstName: 'Quick' });
  });

  it('proxy.yaml: installed, the proxy answers with the sandbox CRM’s own API', async () => {
    const installed = await stack.api(
      'POST',
      `/projects/${stack.project.name}/integrations/crm-proxy/installations`,
      {
        body: {
          groupRef: 'acme',
          config: { content: { provider: 'sandboxApiKey', proxy: { enabled: true } } },
        },
      },
    );
    expect(installed.status).toBe(201);
    const proxied = await request('GET', `${stack.urls.proxy}/contacts?limit=2`, {
      apiKey: stack.project.apiKey,
      headers: {
        'x-amp-proxy-version': '1',
        'x-amp-project-id': stack.project.id,
        'x-amp-integration-name': 'crm-proxy',
        'x-amp-group-ref': 'acme',
      },
    });
    expect(proxied.status).toBe(200);
    expect(proxied.body.results).toHaveLength(2);
  });

  it('subscribe.yaml: installed, a contact created in the sandbox CRM reaches the webhook as a change event', async () => {
    const installed = await stack.api(
      'POST',
      `/projects/${stack.project.name}/integrations/crm-subscribe/installations`,
      {
        body: {
          groupRef: 'acme',
          config: {
            content: {
              provider: 'sandboxApiKey',
              subscribe: {
                objects: {
                  contacts: {
                    objectName: 'contacts',
                    destination: 'records',
                    createEvent: { enabled: 'always' },
                    updateEvent: { enabled: 'always', watchFieldsAuto: 'all' },
                    deleteEvent: { enabled: 'always' },
                  },
                },
              },
            },
          },
        },
      },
    );
    expect(installed.status).toBe(201);
    // The subscription is made at the sandbox in the background; a contact created before it is missed.
    await eventually(async () => {
      const hooks = await fetch(`${sandbox.url}/api/v1/webhooks`, {
        headers: { 'x-api-key': 'sandbox-demo-key' },
      });
      return hooks.ok && ((await hooks.json()) as { results?: unknown[] }).results?.length ? true : undefined;
    }, 30_000);
    const created = await fetch(`${sandbox.url}/api/v1/contacts`, {
      method: 'POST',
      headers: { 'x-api-key': 'sandbox-demo-key', 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper' }),
    });
    expect(created.status).toBe(201);
    await tee.waitFor(
      () => tee.accepted().some((message) => message.body.action === 'subscribe'),
      60_000,
      'the change event',
    );
    const message = tee.accepted().find((received) => received.body.action === 'subscribe')!;
    expect(schemaIssues(ResultMessageSchema, message.body, 'body')).toEqual([]);
    expect(message.body.result[0]).toMatchObject({ subscribeEventType: 'create' });
    await eventually(async () => /^subscribe contacts 1 \{/m.test(hook!.output()), 20_000);
  }, 120_000);
});
