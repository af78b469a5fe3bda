/**
 * The README's quick start, run as written against the real stack: its webhook one-liner, then its
 * shell commands (curl), with only the key, the URLs and the project's name swapped for the test's.
 * Records must arrive at that webhook. Every manifest of `examples/` must deploy as-is, and the
 * quick start's next steps and the sections it sends the reader to (writing, searching, proxying)
 * run as written too, each doing what it says.
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
import { startTestStack, type TestStack } from '../support/stack.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import { eventually, freePort } from '../installations/support.js';

const root = process.cwd();
const examplesDir = join(root, 'examples');
const exampleFiles = readdirSync(examplesDir).filter((file) => file.endsWith('.yaml'));

/** The `sh` code blocks of the README's section with this heading (`## ` or `### `), in order. */
function sectionBlocks(heading: string, level = '## '): string[] {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const start = readme.indexOf(`\n${level}${heading}`);
  expect([heading, start]).toEqual([heading, expect.any(Number)]);
  expect(start).toBeGreaterThan(0);
  // The section ends at the next heading of its level or above.
  const ends = ['\n## ', ...(level === '### ' ? ['\n### '] : [])]
    .map((marker) => readme.indexOf(marker, start + 1))
    .filter((index) => index > 0);
  const section = readme.slice(start, Math.min(...ends));
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]);
}
const quickStartBlocks = () => sectionBlocks('Quick start');

/** The variables a reader sets to their own key and URLs; the test sets them to its own. */
const placeholders = /^(KEY|API|HOOK|WRITE|SEARCH|PROXY|SANDBOX)=.*$/gm;
/** The quick start's helper functions (`api`, `field`), which later blocks use. */
let helpers = '';
let env: NodeJS.ProcessEnv = {};

/** A README block as written, but for its placeholders and the project's name; its output, once it succeeded. */
async function runBlock(block: string): Promise<string> {
  const commands = block
    .replace(placeholders, '')
    .replace(/\/projects\/development(?=[/"?])/g, `/projects/${stack.project.name}`);
  const shell = run(`set -e\n${helpers}\n${commands}`, env);
  expect([await exited(shell), block, shell.output()]).toEqual([0, block, expect.any(String)]);
  return shell.output();
}

/** Each printed line is one JSON answer, and none of them is a problem. */
function answersOf(output: string): any[] {
  const answers = output
    .trim()
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line));
  // A problem carries a numeric status (a connection's `status` is a word).
  for (const answer of answers)
    expect([typeof answer.status, answer.title]).not.toEqual(['number', expect.anything()]);
  return answers;
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
    const [receiverBlock, commandsBlock, logsBlock, subscribeBlock, changeBlock, ...rest] =
      quickStartBlocks();
    expect([logsBlock, subscribeBlock, changeBlock, rest]).toEqual([
      expect.stringContaining('/logs'),
      expect.stringContaining('crm-subscribe'),
      expect.stringContaining('SANDBOX='),
      [],
    ]);

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
    expect(commandsBlock.match(placeholders)).toHaveLength(3);
    helpers = commandsBlock
      .split('\n')
      .filter((line) => /^(api|field)\(\) \{/.test(line))
      .join('\n');
    expect(helpers.split('\n')).toHaveLength(2);
    env = {
      KEY: stack.project.apiKey,
      API: stack.urls.api,
      HOOK: tee.url(),
      WRITE: stack.urls.write,
      SEARCH: stack.urls.search,
      PROXY: stack.urls.proxy,
      SANDBOX: sandbox.url,
    };
    const answers = answersOf(await runBlock(commandsBlock));
    // Each `api` call printed one JSON answer.
    expect(answers).toHaveLength(1 + exampleFiles.length + 2);
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
      expect(message.body.result.length).toBeLessThanOrEqual(200);
    }
    const [first] = reads[0].body.result;
    expect(Object.keys(first.fields).sort()).toEqual(['company', 'email', 'firstname']);
    expect(first.mappedFields).toHaveProperty('surname');
    const printed = /^read contacts (\d+) (\{.*\})$/m.exec(hook.output())!;
    expect(Number(printed[1])).toBeGreaterThan(0);
    expect(JSON.parse(printed[2])).toHaveProperty('fields.email');

    // The operation and its logs.
    const [operation, logs] = answersOf(await runBlock(logsBlock));
    expect(operation).toMatchObject({ id: reads[0].body.operationId, actionType: 'read' });
    expect(Array.isArray(logs) && logs.length).toBeGreaterThan(0);
  }, 180_000);

  it('next: subscribe.yaml installs as written, and a contact created and changed in the sandbox reaches the webhook', async () => {
    const [, , , subscribeBlock, changeBlock] = quickStartBlocks();
    const [installed] = answersOf(await runBlock(subscribeBlock));
    expect(installed).toMatchObject({ config: { content: { subscribe: { objects: { contacts: {} } } } } });
    // "In the background (a few seconds)": the reader waits; the test waits for the registration.
    await eventually(async () => {
      const hooks = await fetch(`${sandbox.url}/api/v1/webhooks`, {
        headers: { 'x-api-key': 'sandbox-demo-key' },
      });
      return hooks.ok && ((await hooks.json()) as { results?: unknown[] }).results?.length ? true : undefined;
    }, 30_000);
    const [changed] = answersOf(await runBlock(changeBlock));
    expect(changed).toMatchObject({ email: 'grace@example.com', jobTitle: 'Rear admiral' });
    const events = () =>
      tee
        .accepted()
        .filter((message) => message.body.action === 'subscribe')
        .map((message) => message.body.result[0].subscribeEventType);
    await tee.waitFor(
      () => events().includes('create') && events().includes('update'),
      60_000,
      'the change events',
    );
    const message = tee.accepted().find((received) => received.body.action === 'subscribe')!;
    expect(schemaIssues(ResultMessageSchema, message.body, 'body')).toEqual([]);
    await eventually(async () => /^subscribe contacts 1 \{/m.test(hook!.output()), 20_000);
  }, 120_000);

  it('"Change events (subscribe)" runs as written: the subscribe operations of the quick start’s change', async () => {
    const [block, ...rest] = sectionBlocks('Change events (subscribe)', '### ');
    expect(rest).toEqual([]);
    const [page] = answersOf(await runBlock(block));
    expect(page.results).toEqual(
      expect.arrayContaining([expect.objectContaining({ actionType: 'subscribe', status: 'success' })]),
    );
  });

  it('"Two commands": the first call with the printed key lists the integrations', async () => {
    const [, call, ...rest] = sectionBlocks('Two commands');
    expect(rest).toEqual([]);
    expect(call).toContain('http://localhost:8080/v1');
    const [integrations] = answersOf(await runBlock(call.replace('http://localhost:8080/v1', '$API')));
    expect(integrations.map((integration: { name: string }) => integration.name).sort()).toEqual([
      'crm-proxy',
      'crm-read',
      'crm-subscribe',
      'crm-write',
    ]);
  });

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

  it('"Writing records" runs as written: create, update, an asynchronous batch and a delete reach the sandbox CRM', async () => {
    const [installBlock, writesBlock, ...rest] = sectionBlocks('Writing records');
    expect(rest).toEqual([]);
    const [installed] = answersOf(await runBlock(installBlock));
    expect(installed).toMatchObject({
      config: { content: { write: { objects: { contacts: {}, deals: {} } } } },
    });
    const since = new Date(Date.now() - 1000).toISOString();
    const [updated, queued, deleted] = answersOf(await runBlock(writesBlock));
    expect(updated).toMatchObject({ result: { success: true } });
    const id = updated.result.recordId;
    expect(deleted).toMatchObject({ result: { success: true, recordId: id } });
    const gone = await fetch(`${sandbox.url}/api/v1/contacts/${id}`, {
      headers: { 'x-api-key': 'sandbox-demo-key' },
    });
    expect(gone.status).toBe(404);
    // The asynchronous batch is written by its workflow; its operation says when.
    expect(queued).toEqual({ operationId: expect.any(String) });
    const done = await eventually(async () => {
      const operation = await stack.api(
        'GET',
        `/projects/${stack.project.name}/operations/${queued.operationId}`,
      );
      return operation.body.status !== 'in_progress' && operation.body;
    }, 60_000);
    expect(done).toMatchObject({ status: 'success' });
    const listed = await fetch(`${sandbox.url}/api/v1/contacts?limit=1000&updatedSince=${since}`, {
      headers: { 'x-api-key': 'sandbox-demo-key' },
    });
    expect(JSON.stringify(await listed.json())).toContain('alan@example.com');
  }, 90_000);

  it('"Searching records" runs as written: it finds the contact the quick start created', async () => {
    const [searchBlock, ...rest] = sectionBlocks('Searching records');
    expect(rest).toEqual([]);
    const [found] = answersOf(await runBlock(searchBlock));
    expect(found.result).toEqual([
      expect.objectContaining({ fields: expect.objectContaining({ email: 'grace@example.com' }) }),
    ]);
    expect(found.result[0].mappedFields).toEqual({ surname: 'Hopper' });
  });

  it('"Command line" runs as written: the deploy dry run finds the quick start’s revision, the list its installations', async () => {
    const [block, ...rest] = sectionBlocks('Command line');
    expect(rest).toEqual([]);
    const keyLine = /^export FERRY_API_KEY=.*$/m;
    expect(block).toMatch(keyLine);
    // The commands' defaults are the reader's `npm start`; the test's host and project instead.
    const shell = run(`set -e\n${block.replace(keyLine, '')}`, {
      FERRY_API_KEY: stack.project.apiKey,
      FERRY_API_URL: new URL(stack.urls.api).origin,
      FERRY_PROJECT: stack.project.name,
    });
    expect([await exited(shell), shell.output()]).toEqual([0, expect.any(String)]);
    expect(shell.output()).toMatch(/^crm-read: unchanged \(live revision [0-9a-f-]{36}\)$/m);
    expect(shell.output()).toMatch(/^[0-9a-f-]{36} +crm-read +acme +(healthy|unhealthy)/m);
    expect(shell.output()).toMatch(/^[0-9a-f-]{36} +crm-write +acme /m);
  }, 60_000);

  it('"Proxying provider calls" runs as written: the proxy answers with the sandbox CRM’s own API', async () => {
    const [proxyBlock, ...rest] = sectionBlocks('Proxying provider calls');
    expect(rest).toEqual([]);
    const [installed, proxied] = answersOf(await runBlock(proxyBlock));
    expect(installed).toMatchObject({ config: { content: { proxy: { enabled: true } } } });
    expect(proxied.results).toHaveLength(2);
  });
});
