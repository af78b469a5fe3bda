import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { request, startTestStack, type TestStack, createDestinations } from '../support/stack.js';
import { createReadFixture, runRead, type ReadFixture } from './fixtures.js';

const CONTACTS = 120;

let sandbox: Sandbox;
let stack: TestStack;
let fixture: ReadFixture;
let deliverPath: string;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: CONTACTS, companies: 5, deals: 5 });
  process.env.FERRY_SANDBOX_URL = sandbox.url;
  process.env.FERRY_DELIVERY_RETRY_SCHEDULE = '0,100ms';
  stack = await startTestStack({ worker: true });
  await createDestinations(stack, ['unused']);
  fixture = await createReadFixture(stack, {
    declared: {
      backfill: { defaultPeriod: { fullHistory: true } },
      delivery: { mode: 'onRequest', pageSize: 50 },
    },
    more: [
      {
        declared: { objectName: 'companies', destination: 'unused', schedule: '0 * * * *' },
        configured: {
          objectName: 'companies',
          destination: 'unused',
          schedule: '0 * * * *',
          selectedFields: {},
        },
      },
    ],
  });
  deliverPath = `/projects/${stack.project.id}/integrations/${fixture.integrationId}/objects/contacts:deliverResults`;
});

afterAll(async () => {
  await fixture?.receiver.stop();
  await stack?.close();
  await sandbox?.close();
});

const deliver = (pages: number, groupRef = fixture.groupRef, path = deliverPath) =>
  stack.read('POST', path, { body: { groupRef, pages } });

describe('delivery.mode onRequest', () => {
  it('stores the pages a read reads instead of sending them', async () => {
    const { result } = await runRead(stack, fixture, { readType: 'backfill' });
    expect(result).toMatchObject({ status: 'success', recordsProcessed: CONTACTS });
    expect(fixture.receiver.requests).toHaveLength(0);
  });

  it('sends as many stored pages as asked for, oldest first, on the read host', async () => {
    const response = await deliver(2);
    expect(response.status).toBe(204);
    expect(fixture.receiver.requests.map((request) => request.body.resultInfo.numRecords)).toEqual([50, 50]);
    expect(fixture.receiver.requests.every((request) => request.verified)).toBe(true);
    const ids = fixture.receiver.acceptedRecordIds();
    expect(ids).toEqual([...ids].sort());
  });

  it('sends what is stored and remembers the rest of the request for pages read later', async () => {
    const response = await deliver(3);
    expect(response.status).toBe(204);
    expect(fixture.receiver.requests).toHaveLength(3);
    expect(new Set(fixture.receiver.acceptedRecordIds()).size).toBe(CONTACTS);

    const created = await request('POST', `${sandbox.url}/api/v1/contacts`, {
      headers: { 'x-api-key': 'sandbox-demo-key' },
      body: { email: 'late@example.com', firstName: 'Late' },
    });
    expect(created.status).toBe(201);
    const { result } = await runRead(stack, fixture, { readType: 'scheduled' });
    expect(result).toMatchObject({ status: 'success', recordsProcessed: 1 });
    expect(fixture.receiver.requests).toHaveLength(4);
    expect(fixture.receiver.requests[3].body.result[0].raw.email).toBe('late@example.com');
  });

  it('is not available on the api host', async () => {
    const response = await stack.api('POST', deliverPath, { body: { groupRef: fixture.groupRef, pages: 1 } });
    expect(response.status).toBe(404);
  });

  it('answers 400 for an object that is not delivered on request', async () => {
    const response = await deliver(
      1,
      fixture.groupRef,
      `/projects/${stack.project.id}/integrations/${fixture.integrationId}/objects/companies:deliverResults`,
    );
    expect(response.status).toBe(400);
    expect(response.body.issues[0]).toMatchObject({ in: 'path', name: 'objectName', value: 'companies' });
  });

  it('answers 404 for an unknown group, integration or object', async () => {
    expect((await deliver(1, 'no-such-group')).status).toBe(404);
    const unknownIntegration = `/projects/${stack.project.id}/integrations/nope/objects/contacts:deliverResults`;
    expect((await deliver(1, fixture.groupRef, unknownIntegration)).status).toBe(404);
    const unknownObject = `/projects/${stack.project.id}/integrations/${fixture.integrationId}/objects/deals:deliverResults`;
    expect((await deliver(1, fixture.groupRef, unknownObject)).status).toBe(404);
  });

  it('validates pages', async () => {
    for (const pages of [0, -1, 1001, 1.5]) {
      const response = await deliver(pages);
      expect(response.status).toBe(400);
      expect(response.body.issues[0]).toMatchObject({ in: 'body', name: 'pages' });
    }
    const missing = await stack.read('POST', deliverPath, { body: { pages: 1 } });
    expect(missing.status).toBe(400);
    expect(missing.body.issues[0].name).toBe('groupRef');
  });
});
