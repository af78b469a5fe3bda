import { defineRoute } from './route.js';
import { conflictOnRace } from './connections.js';
import { ProblemError, type ProblemIssue } from '../core/problem.js';
import { CustomAuthConnectBody, CustomAuthConnectResponse } from '../schemas/connections.js';
import { generateConnection } from '../domain/connections/generate.js';
import { connectionView } from '../domain/connections/views.js';
import { assertActsForGroup, resolveProject } from '../domain/project-access.js';
import { getProvider } from '../providers/catalog/index.js';

/**
 * Connecting a `custom` provider the way the public React components do: one step, the inputs of
 * the provider's `customOpts` in `customAuth`, answered with the connection. Providers that declare
 * `customOpts.multiStep` would answer a redirect to resume with `sessionId`; none in Ferry's catalog does.
 */
export const customAuthRoutes = [
  defineRoute({
    method: 'POST',
    path: '/custom-auth/connect',
    operationId: 'customAuthConnect',
    summary: 'Connect a group to a provider with custom authentication',
    description:
      'For providers whose `authType` is `custom`: `customAuth` holds a value for each of `customOpts.inputs`, and the group’s connection is saved as `connections:generate` would save it (replacing its credentials if it exists). Answers `{connection}`. `sessionId`/`callbackParams` (a multi-step flow) are refused: no provider of Ferry’s catalog has one.',
    tags: ['Connections'],
    // From a browser, with a project JWT minted for the group (or a frontend key), as /oauth-connect.
    auth: ['apiKey', 'projectJwt'],
    body: CustomAuthConnectBody,
    responses: { 200: { description: 'The connection', schema: CustomAuthConnectResponse } },
  }).handle(async ({ em, principal, body }) => {
    if (body.sessionId !== undefined || body.callbackParams !== undefined) {
      throw ProblemError.invalid([
        {
          in: 'body',
          name: body.sessionId !== undefined ? 'sessionId' : 'callbackParams',
          detail: 'there is no multi-step flow to resume: no provider of Ferry’s catalog has one',
        },
      ]);
    }
    const missing: ProblemIssue[] = (['provider', 'groupRef', 'consumerRef', 'customAuth'] as const)
      .filter((field) => body[field] === undefined)
      .map((field) => ({ in: 'body', name: field, detail: `${field} is required` }));
    if (missing.length) throw ProblemError.invalid(missing);
    const provider = getProvider(body.provider!);
    if (provider && provider.authType !== 'custom') {
      throw ProblemError.invalid([
        {
          in: 'body',
          name: 'provider',
          value: body.provider,
          detail: `${provider.name} authenticates with ${provider.authType}, not custom: connect it with ${provider.authType === 'oauth2' ? 'POST /oauth-connect' : 'connections:generate'}`,
        },
      ]);
    }
    assertActsForGroup(principal, body.groupRef);
    const project = await resolveProject(principal, body.projectIdOrName, em);
    const { connection } = await conflictOnRace(() =>
      generateConnection(em, project.id, {
        provider: body.provider!,
        groupRef: body.groupRef!,
        consumerRef: body.consumerRef!,
        ...(body.groupName && { groupName: body.groupName }),
        ...(body.consumerName && { consumerName: body.consumerName }),
        ...(body.providerMetadata && { providerMetadata: body.providerMetadata }),
        customAuth: body.customAuth,
      }),
    );
    return { status: 200, body: { connection: await connectionView(em, connection) } };
  }),
];
