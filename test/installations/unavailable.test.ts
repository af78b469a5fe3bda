import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { transaction } from '../../src/db/orm.js';
import { GroupEntity } from '../../src/db/entities/connection.js';
import { InstallationConfigEntity, InstallationEntity } from '../../src/db/entities/installation.js';
import { resetConfig } from '../../src/config.js';
import { closeTemporalClient, temporalClient } from '../../src/temporal/client.js';
import { startTestStack, type TestStack } from '../support/stack.js';
import {
  configContent,
  connectGroup,
  createDestination,
  createIntegration,
  events,
  freePort,
  install,
  type InstallationFixture,
} from './support.js';

let stack: TestStack;
let fixture: InstallationFixture;
let existing: { id: string; config: { id: string } };
const temporalAddress = process.env.TEMPORAL_ADDRESS;

/** Points Ferry's Temporal client at `address` (a closed port simulates an unreachable server). */
async function useTemporal(address: string | undefined): Promise<void> {
  process.env.TEMPORAL_ADDRESS = address;
  resetConfig();
  await closeTemporalClient();
}

beforeAll(async () => {
  stack = await startTestStack();
  await createDestination(stack);
  fixture = await createIntegration(stack);
  existing = await install(stack, fixture, (await connectGroup(stack)).groupRef);
  await useTemporal(`127.0.0.1:${await freePort()}`);
}, 60_000);

afterAll(async () => {
  await useTemporal(temporalAddress);
  // No worker serves this file's task queue; end the one workflow it started.
  await (await temporalClient()).workflow.getHandle(`installation/${existing.id}`).terminate('test over');
  await stack.close();
});

function expectUnavailable(response: { status: number; body: any; headers: Headers }): void {
  expect(response.status).toBe(503);
  expect(response.headers.get('content-type')).toMatch(/application\/problem\+json/);
  expect(response.headers.get('retry-after')).toBeTruthy();
  expect(response.body).toMatchObject({ title: 'Service Unavailable', retryable: true });
}

describe('when Temporal is unreachable', () => {
  it('answers 503 to a create and leaves nothing behind', async () => {
    const { groupRef } = await connectGroup(stack);
    const response = await stack.api('POST', fixture.base, {
      body: { groupRef, config: { content: configContent() } },
    });
    expectUnavailable(response);
    const written = await transaction(async (em) => {
      const group = await em.findOneOrFail(GroupEntity, { projectId: stack.project.id, groupRef });
      return em.count(InstallationEntity, { groupId: group.id });
    });
    expect(written).toBe(0);
    expect(
      (await events(stack.project.id, 'installation.created')).filter((data) => data.groupRef === groupRef),
    ).toEqual([]);
  }, 30_000);

  it('answers 503 to update, pause and delete and changes nothing', async () => {
    const path = `${fixture.base}/${existing.id}`;
    expectUnavailable(
      await stack.api('PATCH', path, {
        body: {
          updateMask: ['config.content.read.objects.contacts.schedule'],
          installation: {
            config: { content: { read: { objects: { contacts: { schedule: '0 * * * *' } } } } },
          },
        },
      }),
    );
    expectUnavailable(await stack.read('POST', `${path}:pause`, { body: {} }));
    expectUnavailable(await stack.api('DELETE', path));
    const current = await stack.api('GET', path);
    expect(current.body.config.id).toBe(existing.config.id);
    expect(
      await transaction((em) => em.count(InstallationConfigEntity, { installationId: existing.id })),
    ).toBe(1);
    expect((await events(stack.project.id, 'installation.updated')).length).toBe(0);
  }, 60_000);
});
