import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestStack, type TestStack } from '../support/stack.js';
import {
  configContent,
  connectGroup,
  createDestination,
  createIntegration,
  install,
  type InstallationFixture,
} from '../installations/support.js';

/** A destination that integrations or installations name cannot be renamed or deleted from under them. */

let stack: TestStack;
let fixture: InstallationFixture;
let destinations: string;

beforeAll(async () => {
  stack = await startTestStack();
  destinations = `/projects/${stack.project.name}/destinations`;
  await createDestination(stack, 'hooks');
  fixture = await createIntegration(stack);
});
afterAll(() => stack?.close());

describe('destinations in use', () => {
  it('refuses to delete or rename one an integration names, saying which', async () => {
    const deleted = await stack.api('DELETE', `${destinations}/hooks`);
    expect(deleted.status).toBe(409);
    expect(deleted.body.detail).toContain(`integration "${fixture.integrationName}"`);
    const renamed = await stack.api('PATCH', `${destinations}/hooks`, {
      body: { updateMask: ['name'], destination: { name: 'renamed' } },
    });
    expect(renamed.status).toBe(409);
    expect((await stack.api('GET', `${destinations}/hooks`)).status).toBe(200);
  });

  it('names the installations that use it too, and lets other changes through', async () => {
    const { groupRef } = await connectGroup(stack);
    const installation = await install(stack, fixture, groupRef, configContent());
    const deleted = await stack.api('DELETE', `${destinations}/hooks`);
    expect(deleted.body.detail).toContain(`installation ${installation.id}`);
    const moved = await stack.api('PATCH', `${destinations}/hooks`, {
      body: { updateMask: ['metadata.url'], destination: { metadata: { url: 'http://127.0.0.1:10/hooks' } } },
    });
    expect(moved.status).toBe(200);
  });

  it('deletes and renames one nothing names', async () => {
    await createDestination(stack, 'spare');
    const renamed = await stack.api('PATCH', `${destinations}/spare`, {
      body: { updateMask: ['name'], destination: { name: 'spare-2' } },
    });
    expect(renamed.status).toBe(200);
    expect((await stack.api('DELETE', `${destinations}/spare-2`)).status).toBe(204);
  });
});
