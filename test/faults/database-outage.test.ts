import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import { migrate } from '../../src/db/orm.js';
import { writeOneRecord } from '../../src/domain/writes/run.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { connectGroup, eventually } from '../installations/support.js';
import { startKillablePostgres, type KillablePostgres } from '../support/killable-services.js';
import { startTestStack, type TestStack } from '../support/stack.js';

/**
 * PostgreSQL down (killed, then restarting): the API answers 503 with Retry-After instead of an
 * "unexpected error" 500, and an asynchronous write's record whose connection could not be loaded
 * fails its activity, to be retried (nothing reached the provider), instead of failing for good.
 */

const dir = join(tmpdir(), `ferry-db-outage-${process.pid}-${randomUUID().slice(0, 8)}`);
const savedUrl = process.env.DATABASE_URL;
let postgres: KillablePostgres;
let sandbox: Sandbox;
let stack: TestStack;
let connectionId: string;

beforeAll(async () => {
  postgres = await startKillablePostgres(dir);
  await migrate(postgres.url);
  sandbox = await startSandbox({ port: 0, contacts: 1, companies: 1, deals: 1 });
  process.env.DATABASE_URL = postgres.url;
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  resetConfig();
  stack = await startTestStack();
  connectionId = (await connectGroup(stack)).connectionId;
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await sandbox?.close();
  await postgres?.close();
  process.env.DATABASE_URL = savedUrl;
  delete process.env.FERRY_SANDBOX_URL;
  resetConfig();
});

async function sandboxEmails(): Promise<string[]> {
  const query = new URLSearchParams({ updatedSince: sandbox.anchor, limit: '1000' });
  const response = await fetch(`${sandbox.url}/api/v1/contacts?${query}`, {
    headers: { 'x-api-key': 'sandbox-demo-key' },
  });
  const page = (await response.json()) as { results: { email?: string }[] };
  return page.results.map((contact) => contact.email ?? '');
}

const writeInput = (email: string) => ({
  operationId: randomUUID(),
  projectId: stack.project.id,
  installationId: randomUUID(),
  connectionId,
  objectName: 'contacts',
  type: 'create' as const,
  items: [{ record: { email } }],
  index: 0,
});

describe('PostgreSQL unavailable', () => {
  it('makes the API answer 503 with Retry-After, then 200 once it is back', async () => {
    const list = () => stack.api('GET', `/projects/${stack.project.id}/integrations`);
    expect((await list()).status).toBe(200);
    await postgres.kill();
    try {
      // The pool's connections died with the server (first request), then none can be made.
      for (let i = 0; i < 3; i++) {
        const answer = await list();
        expect(answer).toMatchObject({ status: 503, body: { detail: expect.stringContaining('database') } });
        expect(answer.headers.get('retry-after')).toBe('5');
      }
    } finally {
      await postgres.restart();
    }
    await eventually(async () => (await list()).status === 200, 20_000);
  });

  it('has an asynchronous write retry a record it could not start, with nothing sent to the provider', async () => {
    const email = `outage-${randomUUID().slice(0, 8)}@example.com`;
    await postgres.kill();
    try {
      // A backend outlives its killed postmaster for a moment: wait until the server answers no one.
      const list = () => stack.api('GET', `/projects/${stack.project.id}/integrations`);
      await eventually(async () => (await list()).status === 503, 10_000);
      // Thrown, not a failed outcome: the activity fails and Temporal runs it again.
      await expect(writeOneRecord(writeInput(email))).rejects.toThrow();
    } finally {
      await postgres.restart();
    }
    expect(await sandboxEmails()).not.toContain(email);
    // The retry, once PostgreSQL is back, writes it once.
    await eventually(async () => (await writeOneRecord(writeInput(email))).success, 20_000);
    expect((await sandboxEmails()).filter((one) => one === email)).toHaveLength(1);
  });
});
