import type { TSchema } from 'typebox';
import { ProblemSchema } from '../schemas/common.js';
import { NotificationMessageSchema, ResultMessageSchema } from '../schemas/messages.js';
import type { AnyRoute, AuthScheme, Host } from './route.js';

/**
 * The two bearer kinds are separate schemes: both travel as `Authorization: Bearer`, but a builder
 * token is issued by Ferry to a person, while a project JWT is signed by the builder's backend with
 * one of the project's JWT keys and is accepted on fewer endpoints.
 */
const securitySchemes = {
  apiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-Api-Key',
    description: 'An API key of the project (`npm start` prints one for its default project).',
  },
  builderToken: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description: 'A builder token: issued by Ferry to a builder (person), valid for the orgs they belong to.',
  },
  projectJwt: {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
    description:
      'A project JWT: signed by your backend with a project JWT key (`/projects/{project}/jwt-keys`), scoped to one project and, optionally, one group.',
  },
};

const securitySchemeOf: Record<Exclude<AuthScheme, 'none'>, keyof typeof securitySchemes> = {
  apiKey: 'apiKey',
  bearer: 'builderToken',
  projectJwt: 'projectJwt',
};

/** What an operation accepts: any one of its schemes (OpenAPI ORs the entries of `security`). */
function securityOf(auth: AuthScheme[]): Record<string, string[]>[] {
  if (auth.includes('none')) return [];
  return [...new Set(auth.map((scheme) => securitySchemeOf[scheme as Exclude<AuthScheme, 'none'>]))].map(
    (scheme) => ({ [scheme]: [] }),
  );
}

function parameters(schema: TSchema | undefined, location: 'path' | 'query'): unknown[] {
  const object = schema as { properties?: Record<string, TSchema>; required?: string[] } | undefined;
  return Object.entries(object?.properties ?? {}).map(([name, property]) => ({
    name,
    in: location,
    required: location === 'path' || (object?.required ?? []).includes(name),
    schema: property,
    ...((property as { description?: string }).description && {
      description: (property as { description?: string }).description,
    }),
  }));
}

const pathParams = (path: string) => [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]);

/**
 * OpenAPI links from each create (a 201 whose body has an `id`) to the operations on the created
 * resource (its path plus one `{param}` segment), so clients and stateful fuzzers can chain a
 * create with the reads, updates and deletes of what it made. Derived from the paths, so a new
 * resource gets its links without declaring them.
 */
function linksOf(route: AnyRoute, routes: AnyRoute[]): Record<string, unknown> | undefined {
  const created = route.responses[201]?.schema as { properties?: Record<string, unknown> } | undefined;
  if (route.method !== 'POST' || !created?.properties?.id) return undefined;
  const links: Record<string, unknown> = {};
  for (const other of routes) {
    const rest = other.path.startsWith(`${route.path}/`) ? other.path.slice(route.path.length + 1) : '';
    const param = /^\{(\w+)\}$/.exec(rest)?.[1];
    if (!param || other.method === 'POST') continue;
    links[other.operationId] = {
      operationId: other.operationId,
      parameters: {
        ...Object.fromEntries(pathParams(route.path).map((name) => [name, `$request.path.${name}`])),
        [param]: '$response.body#/id',
      },
    };
  }
  return Object.keys(links).length ? links : undefined;
}

export interface OpenApiServer {
  url: string;
  description?: string;
  variables?: Record<string, { default: string; description?: string }>;
}

const signatureHeaders = [
  ['webhook-id', 'The message id; the same on every attempt of one message, to deduplicate by.'],
  ['webhook-timestamp', 'Seconds since the epoch when the attempt was signed.'],
  [
    'webhook-signature',
    '`v1,<base64 HMAC-SHA256 of "id.timestamp.body">` with the destination’s secret (Standard Webhooks; absent when the destination has no secret).',
  ],
  ['svix-id', 'The same as `webhook-id` (Svix names).'],
  ['svix-timestamp', 'The same as `webhook-timestamp`.'],
  ['svix-signature', 'The same as `webhook-signature`.'],
].map(([name, description]) => ({
  name,
  in: 'header',
  required: false,
  description,
  schema: { type: 'string' },
}));

const webhook = (summary: string, description: string, schema: TSchema) => ({
  post: {
    summary,
    description,
    tags: ['Webhook messages'],
    parameters: signatureHeaders,
    requestBody: { required: true, content: { 'application/json': { schema } } },
    responses: {
      '2XX': { description: 'Accepted; any other answer (or none within the delivery timeout) is retried.' },
    },
  },
});

/** What Ferry sends to webhook destinations (OpenAPI 3.1 `webhooks`), listed with the api host's operations. */
const webhooks = {
  records: webhook(
    'Records of a read, change events of a subscription, or schema changes',
    'Sent to the destination an installation’s read, subscribe or watchSchema config names. `action` tells which; records of one page are split into messages under 300 KB.',
    ResultMessageSchema,
  ),
  notification: webhook(
    'A notification event',
    'Sent to the destinations of the topics an event type is routed to (`notification-event-topic-routes`, `topic-destination-routes`).',
    NotificationMessageSchema,
  ),
};

const problemResponse = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ProblemSchema } },
});

/**
 * The OpenAPI 3.1 document of one host, derived from the same route declarations that serve it.
 * `servers` defaults to the host that serves the document; the reference page names each listener.
 */
export function buildOpenApiDocument(
  host: Host,
  routes: AnyRoute[],
  servers: OpenApiServer[] = [{ url: '/' }],
): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const operation = {
      operationId: route.operationId,
      summary: route.summary,
      ...(route.description && { description: route.description }),
      tags: route.tags,
      ...(route.deprecated && { deprecated: true }),
      security: securityOf(route.auth),
      parameters: [...parameters(route.params, 'path'), ...parameters(route.query, 'query')],
      ...(route.body && {
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: route.body,
              ...(route.bodyExample !== undefined && { example: route.bodyExample }),
            },
          },
        },
      }),
      responses: {
        ...Object.fromEntries(
          Object.entries(route.responses).map(([status, response]) => [
            status,
            {
              description: response.description,
              ...(status === '201' && linksOf(route, routes) && { links: linksOf(route, routes) }),
              ...(response.schema && {
                content: Object.fromEntries(
                  [
                    // Errors are sent as problem details, whatever the route declares.
                    response.contentType ??
                      (Number(status) >= 400 ? 'application/problem+json' : 'application/json'),
                    ...(response.alsoAs ?? []),
                  ].map((type) => [type, { schema: response.schema }]),
                ),
              }),
            },
          ]),
        ),
        default: problemResponse('A problem'),
      },
    };
    paths[`/v1${route.path}`] ??= {};
    paths[`/v1${route.path}`][route.method.toLowerCase()] = operation;
  }
  return {
    openapi: '3.1.0',
    info: {
      title: `Ferry ${host} API`,
      version: '1.0.0',
      description: 'Ferry moves records between SaaS providers and your systems, durably.',
    },
    servers,
    components: { securitySchemes },
    paths,
    ...(host === 'api' && { webhooks }),
  };
}
