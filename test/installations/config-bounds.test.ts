import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startTestStack, type TestStack } from '../support/stack.js';
import { applyInstallationMask } from '../../src/domain/installations/update-mask.js';
import {
  configContent,
  connectGroup,
  createDestination,
  createIntegration,
  type InstallationFixture,
} from './support.js';

/** An installation config cannot carry invented fields without bound, even where any field may be chosen. */

let stack: TestStack;
let fixture: InstallationFixture;

beforeAll(async () => {
  stack = await startTestStack();
  await createDestination(stack);
  fixture = await createIntegration(stack);
});
afterAll(() => stack?.close());

describe('selected fields', () => {
  it('refuses more than 2,000 selected fields and names longer than 256 characters', async () => {
    const { groupRef } = await connectGroup(stack);
    const many = Object.fromEntries(Array.from({ length: 10_000 }, (_, index) => [`invented${index}`, true]));
    const tooMany = await stack.api('POST', fixture.base, {
      body: { groupRef, config: { content: configContent({ selectedFields: many }) } },
    });
    expect(tooMany.status).toBe(400);
    expect(JSON.stringify(tooMany.body).length).toBeLessThan(5_000);
    const longName = await stack.api('POST', fixture.base, {
      body: { groupRef, config: { content: configContent({ selectedFields: { ['f'.repeat(300)]: true } }) } },
    });
    expect(longName.status).toBe(400);
    const listed = await stack.api('GET', `${fixture.base}?groupRef=${groupRef}`);
    expect(listed.body.results ?? listed.body).toHaveLength(0);
  });
});

describe('update masks', () => {
  it('refuses paths into an object’s prototype machinery, leaving every object as it was', () => {
    const current = { revisionId: 'r', content: { provider: 'sandbox', read: { objects: {} } } };
    for (const path of [
      'config.content.read.objects.__proto__',
      'config.content.read.objects.__proto__.schedule',
      'config.content.read.objects.constructor.prototype.schedule',
    ]) {
      const installation = JSON.parse(
        '{"config":{"content":{"read":{"objects":{"__proto__":{"schedule":"* * * * *"}}}}}}',
      );
      expect(() => applyInstallationMask(current, installation, [path])).toThrow(
        expect.objectContaining({
          issues: [expect.objectContaining({ detail: `"${path}" names no config field` })],
        }),
      );
      expect(({} as Record<string, unknown>).schedule).toBeUndefined();
    }
  });
});
