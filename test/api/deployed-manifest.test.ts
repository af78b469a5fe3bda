import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { KEPT_MANIFESTS } from '../../src/domain/deployed-manifests.js';
import { em as newEntityManager } from '../../src/db/orm.js';
import { createDestinations, startTestStack, type TestStack } from '../support/stack.js';

/**
 * The manifest as the builder wrote it: `integrations:batch` keeps the file (comments, order,
 * layout), `GET manifests/latest` gives it back with whether it still describes what runs.
 */

let stack: TestStack;
let project: string;

beforeAll(async () => {
  stack = await startTestStack();
  await createDestinations(stack, ['records']);
  project = `/projects/${stack.project.id}`;
});
afterAll(() => stack?.close());

const manifest = (schedule = '*/30 * * * *') =>
  [
    '# The CRM sync our customers install.',
    'specVersion: 1.0.0',
    'integrations:',
    '  - name: crm # keep this name: installations refer to it',
    '    provider: sandboxApiKey',
    '    read:',
    '      objects:',
    '        - objectName: contacts',
    `          schedule: "${schedule}"`,
    '          destination: records',
    '          requiredFields:',
    '            - fieldName: email',
    '',
  ].join('\n');

describe('the deployed manifest', () => {
  it('is 404 before anything was deployed, and needs a key', async () => {
    const none = await stack.api('GET', `${project}/manifests/latest`);
    expect(none.status).toBe(404);
    expect(none.headers.get('content-type')).toContain('application/problem+json');
    expect((await stack.api('GET', `${project}/manifests/latest`, { apiKey: '' })).status).toBe(401);
  });

  it('comes back exactly as written, describing the live integrations', async () => {
    const sourceYaml = manifest();
    expect((await stack.api('PUT', `${project}/integrations:batch`, { body: { sourceYaml } })).status).toBe(
      200,
    );
    const latest = await stack.api('GET', `${project}/manifests/latest`);
    expect(latest.status).toBe(200);
    expect(latest.body.sourceYaml).toBe(sourceYaml);
    expect(latest.body.matchesLive).toBe(true);
    expect(Date.parse(latest.body.createTime)).not.toBeNaN();
  });

  it('keeps nothing of a refused deploy', async () => {
    const refused = await stack.api('PUT', `${project}/integrations:batch`, {
      body: { sourceYaml: manifest('every minute') },
    });
    expect(refused.status).toBe(400);
    const latest = await stack.api('GET', `${project}/manifests/latest`);
    expect(latest.body.sourceYaml).toBe(manifest());
  });

  it('says when the integrations changed another way', async () => {
    const created = await stack.api('POST', `${project}/integrations`, {
      body: {
        name: 'made-by-api',
        provider: 'sandboxApiKey',
        latestRevision: { specVersion: '1.0.0', content: { name: 'made-by-api', provider: 'sandboxApiKey' } },
      },
    });
    expect(created.status).toBe(201);
    const latest = await stack.api('GET', `${project}/manifests/latest`);
    expect(latest.body.matchesLive).toBe(false);
    await stack.api('DELETE', `${project}/integrations/made-by-api`);
    expect((await stack.api('GET', `${project}/manifests/latest`)).body.matchesLive).toBe(true);
  });

  it(`keeps the project's last ${KEPT_MANIFESTS}`, async () => {
    for (let index = 0; index < KEPT_MANIFESTS + 2; index++) {
      const sourceYaml = `${manifest()}# deploy ${index}\n`;
      expect((await stack.api('PUT', `${project}/integrations:batch`, { body: { sourceYaml } })).status).toBe(
        200,
      );
    }
    const [{ count }] = await (
      await newEntityManager()
    ).execute<{ count: string }[]>('select count(*) from deployed_manifests where project_id = ?', [
      stack.project.id,
    ]);
    expect(Number(count)).toBe(KEPT_MANIFESTS);
    const latest = await stack.api('GET', `${project}/manifests/latest`);
    expect(latest.body.sourceYaml).toContain(`# deploy ${KEPT_MANIFESTS + 1}`);
  });
});
