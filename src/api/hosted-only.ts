import { defineRoute, type HttpMethod } from './route.js';
import { ProblemError } from '../core/problem.js';
import { ProblemSchema } from '../schemas/common.js';

/**
 * Operations of the public API that belong to its hosted service alone (billing, domains claimed
 * for sign-up, upload URLs for zipped manifests). Ferry answers each with a 501 problem that says
 * why, so a client learns it at once instead of meeting "no route matches".
 */
const hostedOnly: {
  method: HttpMethod;
  path: string;
  operationId: string;
  summary: string;
  detail: string;
}[] = [
  {
    method: 'GET',
    path: '/orgs/{orgId}/billingAccount',
    operationId: 'getOrgBillingAccount',
    summary: 'The org’s billing account (hosted service only)',
    detail: 'Ferry has no billing: it is open source, and a self-hosted deployment bills no one.',
  },
  {
    method: 'POST',
    path: '/billingAccounts/{billingAccountId}/portalSession',
    operationId: 'createBillingAccountSession',
    summary: 'A billing portal session (hosted service only)',
    detail: 'Ferry has no billing: it is open source, and a self-hosted deployment bills no one.',
  },
  {
    method: 'GET',
    path: '/claimed-domains',
    operationId: 'checkClaimedDomain',
    summary: 'Whether an email domain is claimed (hosted service only)',
    detail: 'Ferry has no claimed domains: builders join an org by invite (POST /orgs/{orgId}/invites).',
  },
  {
    method: 'POST',
    path: '/claimed-domains',
    operationId: 'claimDomain',
    summary: 'Claim an email domain for an org (hosted service only)',
    detail: 'Ferry has no claimed domains: builders join an org by invite (POST /orgs/{orgId}/invites).',
  },
  {
    method: 'GET',
    path: '/orgs/{orgId}/claimed-domains',
    operationId: 'listOrgClaimedDomains',
    summary: 'The org’s claimed email domains (hosted service only)',
    detail: 'Ferry has no claimed domains: builders join an org by invite (POST /orgs/{orgId}/invites).',
  },
  {
    method: 'GET',
    path: '/generate-upload-url',
    operationId: 'generateUploadUrl',
    summary: 'An upload URL for a zipped manifest (hosted service only)',
    detail:
      'Ferry takes a manifest inline: send it as sourceYaml to PUT /projects/{projectIdOrName}/integrations:batch.',
  },
];

export const hostedOnlyRoutes = hostedOnly.map(({ method, path, operationId, summary, detail }) =>
  defineRoute({
    method,
    path,
    operationId,
    summary,
    description: `Answers 501: ${detail}`,
    tags: ['Hosted service only'],
    auth: ['apiKey', 'bearer'],
    responses: { 501: { description: 'Not in Ferry; the problem says why', schema: ProblemSchema } },
  }).handle(async () => {
    throw new ProblemError({ status: 501, detail });
  }),
);
