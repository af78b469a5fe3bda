import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { watchSchema } from '../../activities/schema-watch.js';
import { resetConfig } from '../../src/config.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { createReadFixture, type ReadFixture } from '../reads/fixtures.js';
import { request, startTestStack, type TestStack } from '../support/stack.js';

/**
 * watchSchema against the real stack: the installation workflow's activity compares each read
 * object's fields at the sandbox with the last snapshot in PostgreSQL, and what changed reaches the
 * watch's destination as a signed `schema.watch` message, delivered by its own workflow; every run
 * is a `schema.watch` operation with logs. (When the workflow runs it is tested in
 * test/workflows/installation.test.ts.)
 */

let sandbox: Sandbox;
let stack: TestStack;
let fixture: ReadFixture;

async function customField(field: Record<string, unknown>): Promise<void> {
  const answer = await request('PUT', `${sandbox.url}/api/v1/metadata/contacts/custom-fields`, {
    headers: { 'x-api-key': 'sandbox-demo-key' },
    body: { fields: [field] },
  });
  expect(answer.status).toBe(200);
}

async function finishedOperation(operationId: string): Promise<any> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const answer = await stack.api('GET', `/projects/${stack.project.id}/operations/${operationId}`);
    if (answer.status === 200 && answer.body.status !== 'in_progress') return answer.body;
    if (Date.now() > deadline)
      throw new Error(`operation ${operationId} did not finish: ${JSON.stringify(answer.body)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function logsOf(operationId: string): Promise<string[]> {
  const answer = await stack.api('GET', `/projects/${stack.project.id}/operations/${operationId}/logs`);
  expect(answer.status).toBe(200);
  return answer.body.map((entry: any) => entry.message.msg);
}

const watchMessages = () =>
  fixture.receiver.accepted().filter((request) => request.body.action === 'schema.watch');

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: 10, companies: 2, deals: 2 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  resetConfig();
  stack = await startTestStack({ worker: true });
  fixture = await createReadFixture(stack, {
    declared: { mapToName: 'people' },
    watchSchema: {
      allObjects: {
        fieldCreated: { enabled: 'always' },
        fieldDeleted: { enabled: 'always' },
        fieldChanged: { enabled: 'always' },
      },
      schedule: '0 * * * *',
    },
  });
}, 60_000);

afterAll(async () => {
  await stack?.close();
  await fixture?.receiver.stop();
  await sandbox?.close();
  resetConfig();
});

describe('watchSchema', () => {
  let firstRun: string;

  it('takes the first snapshot quietly, recorded as a schema.watch operation', async () => {
    firstRun = randomUUID();
    const outcome = await watchSchema({ installationId: fixture.installationId, runId: firstRun });
    expect(outcome).toEqual({ operationId: firstRun, messages: 0 });
    const operation = await finishedOperation(firstRun);
    expect(operation).toMatchObject({ actionType: 'schema.watch', status: 'success' });
    expect((await logsOf(firstRun)).join('\n')).toContain('First look at contacts');
    expect(watchMessages()).toHaveLength(0);
  });

  it('records a run once when its activity is retried with the same run id', async () => {
    const again = await watchSchema({ installationId: fixture.installationId, runId: firstRun });
    expect(again).toEqual({ operationId: firstRun, messages: 0 });
    const operations = await stack.api(
      'GET',
      `/projects/${stack.project.id}/integrations/${fixture.integrationId}/installations/${fixture.installationId}/operations`,
    );
    expect(operations.body.results.filter((op: any) => op.id === firstRun)).toHaveLength(1);
  });

  it('delivers a created field as a signed schema.watch message to the destination', async () => {
    await customField({ name: 'tier', label: 'Tier', type: 'string' });
    const runId = randomUUID();
    expect(await watchSchema({ installationId: fixture.installationId, runId })).toEqual({
      operationId: runId,
      messages: 1,
    });
    await fixture.receiver.waitFor(() => watchMessages().length === 1, 30_000, 'the schema.watch message');
    const [delivered] = watchMessages();
    expect(delivered.verified).toBe(true);
    expect(delivered.body).toMatchObject({
      action: 'schema.watch',
      projectId: stack.project.id,
      provider: 'sandboxApiKey',
      groupRef: fixture.groupRef,
      installationId: fixture.installationId,
      objectName: 'people',
      rawObjectName: 'contacts',
      resultInfo: { type: 'inline', numRecords: 1 },
    });
    expect(delivered.body.result.createdFields).toEqual([
      expect.objectContaining({ fieldName: 'tier', displayName: 'Tier', isCustom: true }),
    ]);
    expect(delivered.body.result).toMatchObject({ deletedFields: [], changedFields: [] });
    expect(await finishedOperation(runId)).toMatchObject({ actionType: 'schema.watch', status: 'success' });
    expect((await logsOf(runId)).join('\n')).toContain('1 created, 0 deleted, 0 changed');
  });

  it('delivers a changed field with its old and new schema, and nothing when nothing changed', async () => {
    const quiet = randomUUID();
    expect(await watchSchema({ installationId: fixture.installationId, runId: quiet })).toEqual({
      operationId: quiet,
      messages: 0,
    });
    await customField({ name: 'tier', label: 'Customer tier', type: 'string' });
    const runId = randomUUID();
    expect((await watchSchema({ installationId: fixture.installationId, runId })).messages).toBe(1);
    await fixture.receiver.waitFor(() => watchMessages().length === 2, 30_000, 'the second message');
    const changed = watchMessages()[1].body.result;
    expect(changed.createdFields).toEqual([]);
    expect(changed.changedFields).toEqual([
      {
        oldSchema: expect.objectContaining({ fieldName: 'tier', displayName: 'Tier' }),
        newSchema: expect.objectContaining({ fieldName: 'tier', displayName: 'Customer tier' }),
      },
    ]);
  });

  it('fails the run, saying why, when the provider cannot describe the object', async () => {
    const refused = await createReadFixture(stack, {
      credentials: { apiKey: 'not-the-sandbox-key' },
      watchSchema: { allObjects: { fieldCreated: { enabled: 'always' } } },
    });
    const runId = randomUUID();
    expect(await watchSchema({ installationId: refused.installationId, runId })).toEqual({
      operationId: runId,
      messages: 0,
    });
    const operation = await finishedOperation(runId);
    expect(operation).toMatchObject({ actionType: 'schema.watch', status: 'failure' });
    expect(operation.result).toContain('contacts');
    expect((await logsOf(runId)).join('\n')).toContain('Could not describe contacts');
    await refused.receiver.stop();
  });

  it('does nothing for an installation whose manifest watches no schema', async () => {
    const unwatched = await createReadFixture(stack);
    expect(await watchSchema({ installationId: unwatched.installationId, runId: randomUUID() })).toEqual({
      messages: 0,
    });
    await unwatched.receiver.stop();
  });
});
