import Type from 'typebox';
import { ProblemError } from '../../core/problem.js';
import { ConnectionEntity } from '../../db/entities/connection.js';
import { authSchemes } from '../../domain/connections/sealed-credentials.js';
import { connectionTarget } from '../../domain/credentials.js';
import { startOAuthUpdate } from '../../domain/oauth.js';
import { interactiveRetry } from '../../domain/object-metadata.js';
import { findProject } from '../../domain/project-access.js';
import { requestLog } from '../../domain/reads/connector.js';
import { connectorFor } from '../../providers/connectors/index.js';
import { toProblem } from '../../providers/errors.js';
import { checkedProxyPath } from '../../api/proxy/forward.js';
import { assertProxyEnabled } from '../../api/proxy/resolve.js';
import { defineTool, readOnly } from '../tool.js';

/** The customer's provider account itself: its connection's health, and raw calls through the proxy. */

/** Bytes of a proxied answer's body handed to the agent; the rest is cut, saying so. */
const MAX_PROXY_BODY_BYTES = 32 * 1024;

/** Headers an agent may not set: the connection's credentials are Ferry's to attach. */
const refusedHeaders = new Set(['authorization', 'cookie', 'host', 'x-api-key', 'proxy-authorization']);

export const connectionStatus = defineTool({
  name: 'connection_status',
  title: 'Connection status',
  description:
    'The health of this installation’s connection to the provider: `working`, `bad_credentials` (the provider refused the credentials: the answer then carries a reauthorizeUrl for the customer to open in a browser) or `error`.',
  input: Type.Object({}, { additionalProperties: false }),
  annotations: { ...readOnly, openWorldHint: false },
  async run({ em, scope, installation, settings }) {
    const connection = await em.findOneOrFail(ConnectionEntity, { id: installation.connectionId });
    const answer: Record<string, unknown> = {
      connectionId: connection.id,
      provider: connection.provider,
      status: connection.status,
      ...(connection.lastError && { lastError: connection.lastError }),
    };
    if (connection.status !== 'bad_credentials') return answer;
    if (connection.authScheme !== authSchemes.oauth2AuthorizationCode) {
      return {
        ...answer,
        reauthorize: 'The customer must enter new credentials for this connection in your product.',
      };
    }
    const project = await findProject(em, scope.projectId);
    try {
      const url = await startOAuthUpdate(em, project!, connection.id, settings.publicApiUrl);
      return {
        ...answer,
        reauthorizeUrl: url,
        reauthorize: 'Ask the customer to open reauthorizeUrl in a browser and approve access again.',
      };
    } catch (error) {
      if (!(error instanceof ProblemError)) throw error;
      return { ...answer, reauthorize: error.detail };
    }
  },
});

export const proxyRequest = defineTool({
  name: 'proxy_request',
  title: 'Call the provider’s API',
  description:
    'Sends one request to the provider’s API with the connection’s credentials, for what the other tools do not cover. Only where the installation enables the proxy (list_objects: proxy), and only the methods it lists (GET unless the builder allows more). The path is relative to the provider’s base URL, with its query string.',
  input: Type.Object(
    {
      method: Type.Optional(Type.Enum(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'], { default: 'GET' })),
      path: Type.String({
        minLength: 1,
        maxLength: 4000,
        pattern: '^/',
        description: 'A path under the provider’s base URL, e.g. /api/v1/contacts?limit=5.',
      }),
      headers: Type.Optional(
        Type.Record(Type.String({ minLength: 1, maxLength: 200 }), Type.String({ maxLength: 8000 }), {
          maxProperties: 20,
          description: 'Extra request headers (never credentials: Ferry adds them).',
        }),
      ),
      body: Type.Optional(Type.String({ maxLength: 1_000_000, description: 'The request body, as text.' })),
    },
    { additionalProperties: false },
  ),
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
  secretArguments: ['headers'],
  async run({ em, installation, logs, settings }, args) {
    await assertProxyEnabled(em, installation);
    const method = args.method ?? 'GET';
    const allowed = settings.mcp.proxyMethods;
    if (!allowed.includes(method)) {
      throw new ProblemError({
        status: 403,
        detail: `The proxy tool sends only ${allowed.join(', ')} requests here, not ${method}.`,
        remedy: 'Use create_record, update_record or delete_record to change records.',
        retryable: false,
      });
    }
    const path = checkedProxyPath(args.path);
    const headers = Object.fromEntries(
      Object.entries(args.headers ?? {}).filter(([name]) => !refusedHeaders.has(name.toLowerCase())),
    );
    try {
      const connector = connectorFor(await connectionTarget(installation.connectionId), {
        retry: interactiveRetry,
        onRequest: (entry) => logs.push(requestLog(entry)),
      });
      const answer = await connector.proxy({ method, path, headers, body: args.body });
      const body = Buffer.from(answer.body);
      const cut = body.length > MAX_PROXY_BODY_BYTES;
      return {
        status: answer.status,
        ...(answer.headers['content-type'] && { contentType: answer.headers['content-type'] }),
        body: body.subarray(0, MAX_PROXY_BODY_BYTES).toString('utf8'),
        ...(cut && { truncated: true, bodyBytes: body.length }),
      };
    } catch (error) {
      throw toProblem(error);
    }
  },
});
