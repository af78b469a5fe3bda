import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { transaction } from '../../src/db/orm.js';
import { DeliveryAttemptEntity } from '../../src/db/entities/delivery.js';
import { createReadFixture, type ReadFixture } from '../reads/fixtures.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import { eventually } from '../installations/support.js';

/** The two reads the console needs beyond the resources: delivery attempts and installation schedules. */
let stack: TestStack;
let fixture: ReadFixture;

beforeAll(async () => {
  stack = await startTestStack({ worker: true });
  fixture = await createReadFixture(stack);
  await transaction(async (em) => {
    for (let index = 1; index <= 3; index++) {
      em.create(DeliveryAttemptEntity, {
        projectId: stack.project.id,
        destinationId: fixture.destinationId,
        messageId: `msg_${index}`,
        attempt: index,
        kind: 'record',
        delivered: index === 3,
        status: index === 3 ? 200 : 503,
        durationMs: 10 * index,
        responseBody: index === 3 ? 'ok' : 'x'.repeat(2000),
        createTime: new Date(Date.now() + index),
      });
    }
  });
});

afterAll(async () => {
  await fixture?.receiver.stop();
  await stack?.close();
});

describe('GET …/destinations/{d}/attempts', () => {
  const path = () => `/projects/${stack.project.id}/destinations/${fixture.destinationName}/attempts`;

  it('lists attempts newest first, a page at a time, with a bounded response excerpt', async () => {
    const first = await stack.api('GET', `${path()}?pageSize=2`);
    expect(first.status).toBe(200);
    expect(first.body.results.map((attempt: any) => attempt.messageId)).toEqual(['msg_3', 'msg_2']);
    expect(first.body.results[0]).toMatchObject({
      delivered: true,
      status: 200,
      durationMs: 30,
      responseExcerpt: 'ok',
    });
    expect(first.body.results[1].responseExcerpt).toHaveLength(500);
    expect(first.body.pagination.done).toBe(false);
    const second = await stack.api(
      'GET',
      `${path()}?pageSize=2&pageToken=${first.body.pagination.nextPageToken}`,
    );
    expect(second.body.results.map((attempt: any) => attempt.messageId)).toEqual(['msg_1']);
    expect(second.body.pagination).toEqual({ done: true });
    const failed = await stack.api('GET', `${path()}?delivered=false`);
    expect(failed.body.results.map((attempt: any) => attempt.messageId)).toEqual(['msg_2', 'msg_1']);
  });

  it('refuses a page token it did not issue and an unknown destination', async () => {
    const bad = await stack.api('GET', `${path()}?pageToken=abc`);
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toContain('application/problem+json');
    expect(bad.body.issues[0]).toMatchObject({ in: 'query', name: 'pageToken' });
    const missing = await stack.api('GET', `/projects/${stack.project.id}/destinations/nope/attempts`);
    expect(missing.status).toBe(404);
  });

  it('shows another project nothing', async () => {
    const other = await startTestStackProjectKey();
    const response = await stack.api('GET', path(), { apiKey: other });
    expect([403, 404]).toContain(response.status);
  });
});

describe('GET …/installations/{i}/schedule', () => {
  it('tells each object’s cron, next fire and pause, from the running workflow', async () => {
    const groupRef = `sched-${fixture.groupRef}`;
    const connection = await stack.api('POST', `/projects/${stack.project.id}/connections:generate`, {
      body: { provider: 'sandboxApiKey', groupRef, consumerRef: 'ops', apiKey: 'sandbox-demo-key' },
    });
    expect(connection.status).toBe(201);
    const base = `/projects/${stack.project.id}/integrations/${fixture.integrationId}/installations`;
    const created = await stack.api('POST', base, {
      body: {
        groupRef,
        config: {
          content: {
            provider: 'sandboxApiKey',
            read: {
              objects: {
                contacts: {
                  objectName: 'contacts',
                  schedule: '0 0 1 1 *',
                  destination: fixture.destinationName,
                  selectedFields: {},
                },
              },
            },
          },
        },
      },
    });
    expect(created.status).toBe(201);
    const path = `${base}/${created.body.id}/schedule`;
    const ready = await eventually(async () => {
      const response = await stack.api('GET', path);
      return response.status === 200 && response.body.ready ? response.body : undefined;
    });
    expect(ready.objects).toEqual([
      expect.objectContaining({ objectName: 'contacts', schedule: '0 0 1 1 *', paused: false }),
    ]);
    const next = new Date(ready.objects[0].nextFireAt);
    expect([next.getUTCMonth(), next.getUTCDate()]).toEqual([0, 1]);
    expect(ready.temporal.workflowId).toBe(`installation/${created.body.id}`);

    const paused = await stack.read('POST', `${base}/${created.body.id}:pause`, {
      body: { note: 'customer asked' },
    });
    expect(paused.status).toBe(204);
    const after = await eventually(async () => {
      const response = await stack.api('GET', path);
      return response.body.objects?.[0]?.paused ? response.body : undefined;
    });
    expect(after.objects[0]).toMatchObject({ paused: true, pauseNote: 'customer asked' });
    expect(after.objects[0].nextFireAt).toBeUndefined();
  });

  it('answers 404 for an installation that does not exist', async () => {
    const response = await stack.api(
      'GET',
      `/projects/${stack.project.id}/integrations/${fixture.integrationId}/installations/00000000-0000-4000-8000-000000000000/schedule`,
    );
    expect(response.status).toBe(404);
  });

  it('answers 409 with a problem detail while the workflow is not running', async () => {
    // The fixture writes its installation's rows directly: no workflow was ever started for it.
    const response = await stack.api(
      'GET',
      `/projects/${stack.project.id}/integrations/${fixture.integrationId}/installations/${fixture.installationId}/schedule`,
    );
    expect(response.headers.get('content-type')).toContain('application/problem+json');
    expect(response.status).toBe(409);
    expect(response.body.detail).toMatch(/not running/);
  });
});

async function startTestStackProjectKey(): Promise<string> {
  const { createTestProject } = await import('../support/stack.js');
  return (await createTestProject()).apiKey;
}
