import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { transaction } from '../../src/db/orm.js';
import { appendLogs } from '../../src/domain/operation-logs.js';
import { createOperation } from '../../src/domain/operations.js';
import { createTestProject, request, startTestStack, type TestStack } from '../support/stack.js';
import { PublicApi } from '../support/public-api.js';
import { createReadFixture, type ReadFixture } from '../reads/fixtures.js';

let stack: TestStack;
let fixture: ReadFixture;
let listPath: string;

beforeAll(async () => {
  stack = await startTestStack();
  fixture = await createReadFixture(stack);
  listPath = `/projects/${stack.project.id}/integrations/${fixture.integrationId}/installations/${fixture.installationId}/operations`;
});

afterAll(async () => {
  await fixture?.receiver.stop();
  await stack?.close();
});

async function addOperations(count: number, installationId = fixture.installationId): Promise<string[]> {
  return transaction(async (em) => {
    const ids: string[] = [];
    for (let index = 0; index < count; index++) {
      const operation = createOperation(em, {
        projectId: stack.project.id,
        integrationId: fixture.integrationId,
        installationId,
        configId: randomUUID(),
        actionType: 'read',
        metadata: { objects: [`object${index}`], readType: 'scheduled' },
      });
      ids.push(operation.id);
      // One flush per row: `seq` follows insertion order.
      await em.flush();
    }
    return ids;
  });
}

describe('GET .../installations/{id}/operations', () => {
  let ids: string[];

  beforeAll(async () => {
    ids = await addOperations(7);
  });

  it('lists newest first with the spec’s envelope, 200 per page by default', async () => {
    const response = await stack.api('GET', listPath);
    expect(response.status).toBe(200);
    expect(response.body.pagination).toEqual({ done: true });
    expect(response.body.results.map((operation: any) => operation.id)).toEqual([...ids].reverse());
    expect(response.body.results[0]).toEqual({
      id: ids[6],
      projectId: stack.project.id,
      integrationId: fixture.integrationId,
      installationId: fixture.installationId,
      configId: expect.any(String),
      actionType: 'read',
      status: 'in_progress',
      metadata: {
        objects: ['object6'],
        readType: 'scheduled',
        temporal: {
          workflowId: `read/${ids[6]}`,
          url: `http://localhost:8233/namespaces/default/workflows/${encodeURIComponent(`read/${ids[6]}`)}`,
        },
      },
      createTime: expect.any(String),
      updateTime: expect.any(String),
    });
  });

  it('pages with opaque tokens, stable while new operations arrive', async () => {
    const first = await stack.api('GET', `${listPath}?pageSize=3`);
    expect(first.body.results.map((operation: any) => operation.id)).toEqual([ids[6], ids[5], ids[4]]);
    expect(first.body.pagination.done).toBe(false);
    const token = first.body.pagination.nextPageToken;
    expect(token).toEqual(expect.any(String));

    const newer = await addOperations(2);
    const second = await stack.api('GET', `${listPath}?pageSize=3&pageToken=${encodeURIComponent(token)}`);
    expect(second.body.results.map((operation: any) => operation.id)).toEqual([ids[3], ids[2], ids[1]]);
    const third = await stack.api(
      'GET',
      `${listPath}?pageSize=3&pageToken=${encodeURIComponent(second.body.pagination.nextPageToken)}`,
    );
    expect(third.body.results.map((operation: any) => operation.id)).toEqual([ids[0]]);
    expect(third.body.pagination).toEqual({ done: true });

    const fresh = await stack.api('GET', `${listPath}?pageSize=2`);
    expect(fresh.body.results.map((operation: any) => operation.id)).toEqual([newer[1], newer[0]]);
  });

  it.each([
    ['pageSize=0', 'pageSize'],
    ['pageSize=1001', 'pageSize'],
    ['pageSize=abc', 'pageSize'],
    ['pageSize=2.5', 'pageSize'],
    ['pageToken=', 'pageToken'],
    ['pageToken=forged', 'pageToken'],
    [`pageToken=${Buffer.from('1').toString('base64url')}.AAAAAAAAAAAAAAAAAAAAAA`, 'pageToken'],
    [`pageToken=${'x'.repeat(600)}`, 'pageToken'],
  ])('refuses %s with 400 naming %s', async (query, name) => {
    const response = await stack.api('GET', `${listPath}?${query}`);
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    expect(response.body.issues[0]).toMatchObject({ in: 'query', name });
  });

  it('refuses a token minted for another installation', async () => {
    const other = await createReadFixture(stack);
    await addOperations(3, other.installationId);
    const otherPath = `/projects/${stack.project.id}/integrations/${other.integrationId}/installations/${other.installationId}/operations`;
    const page = await stack.api('GET', `${otherPath}?pageSize=1`);
    const token = page.body.pagination.nextPageToken;
    const replayed = await stack.api('GET', `${listPath}?pageToken=${encodeURIComponent(token)}`);
    expect(replayed.status).toBe(400);
    await other.receiver.stop();
  });

  it('answers 404 for an unknown installation, integration or project', async () => {
    const base = `/projects/${stack.project.id}/integrations/${fixture.integrationId}/installations`;
    expect((await stack.api('GET', `${base}/${randomUUID()}/operations`)).status).toBe(404);
    expect((await stack.api('GET', `${base}/not-a-uuid/operations`)).status).toBe(404);
    const wrongIntegration = `/projects/${stack.project.id}/integrations/${randomUUID()}/installations/${fixture.installationId}/operations`;
    expect((await stack.api('GET', wrongIntegration)).status).toBe(404);
    const other = await createTestProject();
    const leak = await request(
      'GET',
      `${stack.urls.api}/projects/${other.id}${listPath.slice(`/projects/${stack.project.id}`.length)}`,
      {
        apiKey: other.apiKey,
      },
    );
    expect(leak.status).toBe(404);
  });
});

describe('GET /projects/{p}/operations/{id} and /logs', () => {
  it('gets one operation and its logs, oldest first, in the spec’s shape', async () => {
    const [id] = await addOperations(1);
    await transaction(async (em) => {
      appendLogs(em, stack.project.id, id, [
        { severity: 'INFO', msg: 'started', timestamp: new Date('2026-01-01T00:00:00Z') },
        {
          severity: 'DEBUG',
          msg: 'GET https://provider.example/contacts → 200',
          details: { request: { method: 'GET', url: 'https://provider.example/contacts' } },
        },
        { severity: 'WARN', msg: 'delivery failed; will retry', error: 'answered 503' },
        { severity: 'ERROR', msg: 'failed', error: 'boom' },
      ]);
    });
    const operation = await stack.api('GET', `/projects/${stack.project.id}/operations/${id}`);
    expect(operation.status).toBe(200);
    expect(operation.body.id).toBe(id);
    const logs = await stack.api('GET', `/projects/${stack.project.id}/operations/${id}/logs`);
    expect(logs.status).toBe(200);
    expect(logs.body.map((log: any) => log.severity)).toEqual(['INFO', 'DEBUG', 'WARN', 'ERROR']);
    expect(logs.body[0]).toEqual({
      timestamp: '2026-01-01T00:00:00.000Z',
      severity: 'INFO',
      message: { msg: 'started', operation_id: id, details: {} },
    });
    // Detail values are strings, as the public log shape has them: JSON for structured ones.
    expect(typeof logs.body[1].message.details.request).toBe('string');
    expect(JSON.parse(logs.body[1].message.details.request)).toEqual({
      method: 'GET',
      url: 'https://provider.example/contacts',
    });
    expect(
      new PublicApi().checkResponse(
        'api',
        'GET',
        `/projects/${stack.project.id}/operations/${id}/logs`,
        logs,
      ),
    ).toEqual([]);
    expect(logs.body[3].message.error).toBe('boom');
  });

  it('answers 404 for unknown operations, malformed ids and other projects’ operations', async () => {
    const [id] = await addOperations(1);
    expect((await stack.api('GET', `/projects/${stack.project.id}/operations/${randomUUID()}`)).status).toBe(
      404,
    );
    expect((await stack.api('GET', `/projects/${stack.project.id}/operations/nope`)).status).toBe(404);
    expect(
      (await stack.api('GET', `/projects/${stack.project.id}/operations/${randomUUID()}/logs`)).status,
    ).toBe(404);
    const other = await createTestProject();
    const leak = await request('GET', `${stack.urls.api}/projects/${other.id}/operations/${id}`, {
      apiKey: other.apiKey,
    });
    expect(leak.status).toBe(404);
    const leakLogs = await request('GET', `${stack.urls.api}/projects/${other.id}/operations/${id}/logs`, {
      apiKey: other.apiKey,
    });
    expect(leakLogs.status).toBe(404);
  });
});
