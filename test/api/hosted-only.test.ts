import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { transaction } from '../../src/db/orm.js';
import { config } from '../../src/config.js';
import { findOrCreateBuilder, issueBuilderToken } from '../../src/domain/builder-tokens.js';
import { PublicApi } from '../support/public-api.js';
import { request, startTestStack, type TestStack } from '../support/stack.js';

/** The public API's billing, claimed-domain and upload-URL operations belong to its hosted service. */

let stack: TestStack;
let token: string;

beforeAll(async () => {
  stack = await startTestStack();
  token = await transaction(async (em) =>
    issueBuilderToken(
      await findOrCreateBuilder(em, `billing-${randomUUID().slice(0, 8)}@example.com`),
      config().builderTokenSecret,
    ),
  );
});
afterAll(async () => stack.close());

const operations = [
  ['GET', `/orgs/${randomUUID()}/billingAccount`, /no billing/],
  ['POST', '/billingAccounts/ba-1/portalSession', /no billing/],
  ['GET', '/claimed-domains?domain=example.com', /no claimed domains.*invite/],
  ['POST', '/claimed-domains', /no claimed domains.*invite/],
  ['GET', `/orgs/${randomUUID()}/claimed-domains`, /no claimed domains.*invite/],
  ['GET', '/generate-upload-url', /sourceYaml/],
] as const;

describe('operations of the hosted service alone', () => {
  it.each(operations)('%s %s answers 501 with a problem saying why', async (method, path, why) => {
    const response = await request(method, `${stack.urls.api}${path}`, {
      bearer: token,
      ...(method === 'POST' && { body: {} }),
    });
    expect(response.status).toBe(501);
    expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(response.body).toMatchObject({
      status: 501,
      title: 'Not Implemented',
      detail: expect.stringMatching(why),
    });
    expect(new PublicApi().checkResponse('api', method, path, response)).toEqual([]);
    const withKey = await request(method, `${stack.urls.api}${path}`, { apiKey: stack.project.apiKey });
    expect(withKey.status).toBe(501);
  });

  it.each(operations)('%s %s needs credentials like every other operation', async (method, path, _why) => {
    expect((await request(method, `${stack.urls.api}${path}`)).status).toBe(401);
  });
});
