import { ProblemSchema } from '../../schemas/common.js';
import type { OpenApiServer } from '../openapi.js';
import { PROXY_VERSION } from './headers.js';

/**
 * The proxy listener's OpenAPI document, written by hand: its paths are the provider's, so it
 * describes one catch-all path, the headers that address Ferry, and answers that are either Ferry's
 * own problem details or the provider's response passed through as it came (any status, any type).
 * The API reference shows it and the proxy fuzz test runs from it.
 */

const header = (name: string, description: string, schema: object, required = false) => ({
  name,
  in: 'header',
  required,
  description,
  schema,
});

const parameters = [
  {
    name: 'path',
    in: 'path',
    required: true,
    description: 'The provider’s path, relative to its base URL, e.g. `contacts` (slashes allowed).',
    schema: { type: 'string', minLength: 1 },
    example: 'contacts',
  },
  header(
    'x-amp-proxy-version',
    'The proxy protocol version.',
    { type: 'string', enum: [PROXY_VERSION] },
    true,
  ),
  header(
    'x-amp-project-id',
    'The project’s id (a UUID, not its name).',
    { type: 'string', format: 'uuid' },
    true,
  ),
  header('x-amp-installation-id', 'The installation; or, instead, the next two headers.', {
    type: 'string',
    format: 'uuid',
  }),
  header('x-amp-integration-name', 'The integration, with `x-amp-group-ref`.', { type: 'string' }),
  header('x-amp-group-ref', 'The group whose installation of the integration is used.', { type: 'string' }),
];

// One `default` answer: a provider's 404 or 400 is passed through in its own type, so Ferry's own
// statuses cannot be declared as problem+json only.
const responses = {
  default: {
    description:
      'The provider’s answer, status, headers and body as it sent them; or Ferry’s problem details: ' +
      '400 for missing or invalid proxy headers or a path that could leave the provider’s base URL, ' +
      '401 for an unknown API key, 403 for another project’s key or an installation that does not ' +
      'enable the proxy, 404 for an unknown installation, integration or group, 413 for a body over ' +
      '`FERRY_BODY_LIMIT`, 502 when the provider cannot be reached.',
    content: {
      'application/problem+json': { schema: ProblemSchema },
      '*/*': { schema: {} },
    },
  },
};

const methods = ['get', 'post', 'put', 'patch', 'delete'] as const;

const operation = (method: (typeof methods)[number]) => ({
  operationId: `proxy${method[0].toUpperCase()}${method.slice(1)}`,
  summary: `${method.toUpperCase()} a provider path, with the installation’s credentials`,
  description:
    'Forwards the method, path, query, headers and body to the base URL of the provider of the installation’s connection, with its credentials attached (refreshed once on 401), and answers with the provider’s status, headers and body, streamed both ways. The installation’s config must enable it (`config.content.proxy.enabled: true`). The `x-amp-*` and `X-Api-Key` headers address Ferry and are never forwarded. The proxy does not answer CORS preflights (they are the provider’s to answer), so “Try it out” from a browser page on another origin fails; the curl it shows works.',
  tags: ['Proxy'],
  security: [{ apiKey: [] }],
  parameters,
  ...(method !== 'get' &&
    method !== 'delete' && {
      requestBody: {
        required: false,
        description: 'Sent to the provider unchanged (at most `FERRY_BODY_LIMIT`).',
        content: { '*/*': { schema: {} } },
      },
    }),
  responses,
});

export function proxyOpenApiDocument(servers: OpenApiServer[] = [{ url: '/' }]): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Ferry proxy',
      version: '1.0.0',
      description:
        'Calls a provider’s own API as one installation’s connection. Not a `/v1` host: the path is the provider’s.',
    },
    servers,
    components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' } } },
    paths: {
      '/{path}': Object.fromEntries(methods.map((method) => [method, operation(method)])),
    },
  };
}
