import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { expect } from '@jest/globals';
import { transaction } from '../../src/db/orm.js';
import { NotificationEventEntity } from '../../src/db/entities/event.js';
import type { TestStack } from '../support/stack.js';

/** A schedule that never fires during a test run, so no real read starts unless a test asks for one. */
export const YEARLY = '0 0 1 1 *';

/** The manifest every installation test uses: three read objects (one `enabled: always`), write, subscribe, proxy. */
export function manifestContent(name: string, overrides: { dealsSchedule?: string } = {}) {
  return {
    name,
    provider: 'sandboxApiKey',
    read: {
      objects: [
        {
          objectName: 'contacts',
          destination: 'hooks',
          schedule: YEARLY,
          requiredFields: [{ fieldName: 'email' }],
          optionalFields: [{ fieldName: 'firstName' }, { fieldName: 'lastName' }, { mapToName: 'priority' }],
          backfill: { defaultPeriod: { days: 30 } },
        },
        {
          objectName: 'companies',
          destination: 'hooks',
          schedule: YEARLY,
          optionalFieldsAuto: 'all' as const,
        },
        {
          objectName: 'deals',
          destination: 'hooks',
          schedule: overrides.dealsSchedule ?? YEARLY,
          enabled: 'always' as const,
        },
      ],
    },
    write: { objects: [{ objectName: 'contacts' }] },
    subscribe: { objects: [{ objectName: 'contacts', destination: 'hooks' }] },
    proxy: { enabled: true },
  };
}

/** A valid installation config for `manifestContent` selecting contacts (no backfill, so no read starts). */
export function configContent(contacts: Record<string, unknown> = {}) {
  return {
    provider: 'sandboxApiKey',
    read: {
      objects: {
        contacts: {
          objectName: 'contacts',
          schedule: YEARLY,
          destination: 'hooks',
          selectedFields: { email: true, firstName: true },
          backfill: { defaultPeriod: { days: 0 } },
          ...contacts,
        },
      },
    },
    write: { objects: { contacts: { objectName: 'contacts' } } },
    proxy: { enabled: true },
  };
}

export interface InstallationFixture {
  integrationId: string;
  integrationName: string;
  revisionId: string;
  base: string;
}

export async function createIntegration(
  stack: TestStack,
  name = `crm-${randomUUID().slice(0, 8)}`,
): Promise<InstallationFixture> {
  const response = await stack.api('POST', `/projects/${stack.project.name}/integrations`, {
    body: {
      name,
      provider: 'sandboxApiKey',
      latestRevision: { specVersion: '1.0.0', content: manifestContent(name) },
    },
  });
  expect(response.status).toBe(201);
  return {
    integrationId: response.body.id,
    integrationName: name,
    revisionId: response.body.latestRevision.id,
    base: `/projects/${stack.project.name}/integrations/${response.body.id}/installations`,
  };
}

export async function createDestination(stack: TestStack, name = 'hooks'): Promise<void> {
  const response = await stack.api('POST', `/projects/${stack.project.name}/destinations`, {
    body: { name, type: 'webhook', metadata: { url: 'http://127.0.0.1:9/hooks' } },
  });
  expect([201, 409]).toContain(response.status);
}

/** A group with its sandbox connection (API key), made through the connections API. */
export async function connectGroup(
  stack: TestStack,
  groupRef = `group-${randomUUID().slice(0, 8)}`,
  provider = 'sandboxApiKey',
): Promise<{ groupRef: string; connectionId: string }> {
  const response = await stack.api('POST', `/projects/${stack.project.name}/connections:generate`, {
    body: {
      provider,
      groupRef,
      groupName: `${groupRef} Inc.`,
      consumerRef: `${groupRef}-admin`,
      apiKey: 'sandbox-demo-key',
    },
  });
  expect([200, 201]).toContain(response.status);
  return { groupRef, connectionId: response.body.id };
}

export async function install(
  stack: TestStack,
  fixture: InstallationFixture,
  groupRef: string,
  content: unknown = configContent(),
) {
  const response = await stack.api('POST', fixture.base, { body: { groupRef, config: { content } } });
  expect(response).toMatchObject({ status: 201 });
  return response.body;
}

export async function events(projectId: string, type: string): Promise<Record<string, unknown>[]> {
  return transaction(async (em) =>
    (await em.find(NotificationEventEntity, { projectId, type }, { orderBy: { createTime: 'asc' } })).map(
      (event) => event.data,
    ),
  );
}

/** Polls until `check` returns something truthy (or throws its last error), for eventually consistent results. */
export async function eventually<T>(
  check: () => Promise<T | undefined | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) throw lastError ?? new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

export function issueNames(body: { issues?: { name: string }[] }): string[] {
  return (body.issues ?? []).map((issue) => issue.name);
}

/** A loopback port nothing listens on (for an unreachable Temporal). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}
