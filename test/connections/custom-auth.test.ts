import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PublicApi } from '../support/public-api.js';
import { projectJwtMinter } from '../support/project-jwt.js';
import { request, startTestStack, type TestStack } from '../support/stack.js';

/**
 * POST /custom-auth/connect: how the public React components connect a provider whose authType is
 * `custom` (one step: the provider's inputs in `customAuth`), answered with the connection.
 */

let stack: TestStack;
const publicApi = new PublicApi();

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => stack.close());

const connect = (body: Record<string, unknown>, options: { bearer?: string } = {}) =>
  request('POST', `${stack.urls.api}/custom-auth/connect`, {
    ...(options.bearer ? { bearer: options.bearer } : { apiKey: stack.project.apiKey }),
    body: { projectIdOrName: stack.project.name, ...body },
  });

const clari = (groupRef: string, apiKey = 'clari-key') => ({
  provider: 'clariCopilot',
  groupRef,
  groupName: `${groupRef} Inc.`,
  consumerRef: 'ada',
  consumerName: 'Ada Lovelace',
  customAuth: { apiKey, apiPassword: 'clari-password' },
});

describe('POST /custom-auth/connect', () => {
  it('connects the group with the provider’s inputs and answers {connection}, as the public document declares', async () => {
    const response = await connect(clari('custom-acme'));
    expect(response.status).toBe(200);
    expect(response.body.connection).toMatchObject({
      provider: 'clariCopilot',
      group: { groupRef: 'custom-acme', groupName: 'custom-acme Inc.' },
      consumer: { consumerRef: 'ada', consumerName: 'Ada Lovelace' },
      status: 'working',
    });
    expect(JSON.stringify(response.body)).not.toContain('clari-password');
    expect(publicApi.checkResponse('api', 'POST', '/custom-auth/connect', response)).toEqual([]);

    const id = response.body.connection.id;
    const stored = await stack.api(
      'GET',
      `/projects/${stack.project.name}/connections/${id}?includeCreds=true`,
    );
    expect(stored.body.customAuth).toEqual({ apiKey: 'clari-key', apiPassword: 'clari-password' });
    // Connecting the group again replaces the credentials of its one connection.
    const again = await connect(clari('custom-acme', 'rotated-key'));
    expect(again.body.connection.id).toBe(id);
    const rotated = await stack.api(
      'GET',
      `/projects/${stack.project.name}/connections/${id}?includeCreds=true`,
    );
    expect(rotated.body.customAuth.apiKey).toBe('rotated-key');
  });

  it('refuses a multi-step resume, missing fields and a provider that is not custom, with 400s naming them', async () => {
    const resume = await connect({ sessionId: 'session-1', callbackParams: { code: 'x' } });
    expect(resume.status).toBe(400);
    expect(resume.body.issues).toMatchObject([
      { name: 'sessionId', detail: expect.stringMatching(/multi-step/) },
    ]);
    const missing = await connect({ provider: 'clariCopilot' });
    expect(missing.status).toBe(400);
    expect(missing.body.issues.map((issue: { name: string }) => issue.name)).toEqual([
      'groupRef',
      'consumerRef',
      'customAuth',
    ]);
    const notCustom = await connect({ ...clari('custom-keyed'), provider: 'sandboxApiKey' });
    expect(notCustom.status).toBe(400);
    expect(notCustom.body.issues).toMatchObject([
      { name: 'provider', detail: expect.stringMatching(/apiKey, not custom/) },
    ]);
    const wrongInput = await connect({ ...clari('custom-wrong'), customAuth: { apiKey: 'k' } });
    expect(wrongInput.status).toBe(400);
    expect(wrongInput.body.issues).toMatchObject([
      expect.objectContaining({ name: 'customAuth.apiPassword' }),
    ]);
    expect(publicApi.checkResponse('api', 'POST', '/custom-auth/connect', wrongInput)).toEqual([]);
  });

  it('takes a project JWT for the group it names only, and needs credentials', async () => {
    const mint = await projectJwtMinter(stack);
    const mine = await connect(clari('custom-jwt'), { bearer: await mint({ groupRef: 'custom-jwt' }) });
    expect(mine.status).toBe(200);
    const theirs = await connect(clari('custom-other'), { bearer: await mint({ groupRef: 'custom-jwt' }) });
    expect(theirs.status).toBe(403);
    const anonymous = await request('POST', `${stack.urls.api}/custom-auth/connect`, {
      body: { projectIdOrName: stack.project.name, ...clari('custom-anon') },
    });
    expect(anonymous.status).toBe(401);
  });
});
