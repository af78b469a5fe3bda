import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createDestinations, startTestStack, type TestStack } from '../support/stack.js';

/** A manifest is held to the rules its installations will be held to, when it is written. */

let stack: TestStack;

beforeAll(async () => {
  stack = await startTestStack();
  await createDestinations(stack, ['hooks']);
});
afterAll(() => stack?.close());

const manifest = (overrides: { schedule?: string; watchSchedule?: string }) => ({
  name: `crm-${Math.random().toString(36).slice(2, 8)}`,
  provider: 'sandboxApiKey',
  latestRevision: {
    specVersion: '1.0.0',
    content: {
      name: 'x',
      provider: 'sandboxApiKey',
      read: {
        objects: [
          { objectName: 'contacts', destination: 'hooks', schedule: overrides.schedule ?? '0 * * * *' },
        ],
      },
      ...(overrides.watchSchedule && {
        watchSchema: {
          destination: 'hooks',
          allObjects: { fieldCreated: { enabled: 'always' } },
          schedule: overrides.watchSchedule,
        },
      }),
    },
  },
});

async function create(overrides: { schedule?: string; watchSchedule?: string }) {
  const body = manifest(overrides);
  body.latestRevision.content.name = body.name;
  return stack.api('POST', `/projects/${stack.project.name}/integrations`, { body });
}

describe('manifest schedules', () => {
  it('refuses a read schedule more frequent than FERRY_MIN_SCHEDULE_INTERVAL_SECONDS allows', async () => {
    const response = await create({ schedule: '* * * * *' });
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body.issues)).toMatch(/read\.objects\[0\]\.schedule/);
    expect((await create({ schedule: '*/5 * * * *' })).status).toBe(201);
  });

  it('refuses a schema watch more often than hourly', async () => {
    const response = await create({ watchSchedule: '*/10 * * * *' });
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body.issues)).toMatch(/watchSchema\.schedule/);
    expect((await create({ watchSchedule: '0 * * * *' })).status).toBe(201);
  });
});

describe('manifest destinations', () => {
  it('refuses a manifest naming a destination the project does not have, at create and at revision', async () => {
    const body = manifest({ watchSchedule: '0 * * * *' });
    body.latestRevision.content.name = body.name;
    body.latestRevision.content.read.objects[0].destination = 'nowhere';
    const refused = await stack.api('POST', `/projects/${stack.project.name}/integrations`, { body });
    expect(refused.status).toBe(400);
    expect(refused.body.issues).toMatchObject([
      expect.objectContaining({
        name: 'latestRevision.content.read.objects[0].destination',
        value: 'nowhere',
        detail: expect.stringContaining('names destination "nowhere", which does not exist'),
      }),
    ]);
    expect((await stack.api('GET', `/projects/${stack.project.name}/integrations/${body.name}`)).status).toBe(
      404,
    );

    const created = await create({});
    expect(created.status).toBe(201);
    const revision = await stack.api(
      'POST',
      `/projects/${stack.project.name}/integrations/${created.body.id}/revisions`,
      {
        body: {
          sourceYaml: [
            'specVersion: 1.0.0',
            'integrations:',
            `  - name: ${created.body.name}`,
            '    provider: sandboxApiKey',
            '    subscribe:',
            '      objects:',
            '        - objectName: contacts',
            '          destination: gone',
          ].join('\n'),
        },
      },
    );
    expect(revision.status).toBe(400);
    expect(JSON.stringify(revision.body.issues)).toContain('subscribe.objects[0].destination');
  });
});
