import { describe, expect, it } from '@jest/globals';
import { buildOpenApiDocument } from '../../src/api/openapi.js';
import { allRoutes } from '../../src/api/routes.js';
import type { Host } from '../../src/api/route.js';
import { PublicApi } from '../support/public-api.js';

/** Every endpoint of the spec and of COMPAT.md, by host. Path parameter names do not matter. */
const expected: Record<Host, string[]> = {
  api: [
    'GET /providers',
    'GET /providers/{}',
    'GET /projects',
    'POST /projects',
    'GET /projects/{}',
    'PATCH /projects/{}',
    'GET /projects/{}/api-keys',
    'POST /projects/{}/api-keys',
    'GET /projects/{}/api-keys/{}',
    'PATCH /projects/{}/api-keys/{}',
    'DELETE /projects/{}/api-keys/{}',
    'POST /projects/{}/integrations',
    'GET /projects/{}/integrations',
    'GET /projects/{}/integrations/{}',
    'DELETE /projects/{}/integrations/{}',
    'PUT /projects/{}/integrations:batch',
    'GET /projects/{}/integrations/{}/revisions',
    'POST /projects/{}/integrations/{}/revisions',
    'GET /projects/{}/integrations/{}/revisions/{}:hydrate',
    'GET /projects/{}/installations',
    'POST /projects/{}/integrations/{}/installations',
    'GET /projects/{}/integrations/{}/installations',
    'GET /projects/{}/integrations/{}/installations/{}',
    'PATCH /projects/{}/integrations/{}/installations/{}',
    'DELETE /projects/{}/integrations/{}/installations/{}',
    'PATCH /projects/{}/integrations/{}/objects/{}/config-content',
    'GET /projects/{}/integrations/{}/installations/{}/operations',
    'GET /projects/{}/integrations/{}/installations/{}/objects/{}/backfill-progress',
    'GET /projects/{}/operations/{}',
    'GET /projects/{}/operations/{}/logs',
    'GET /projects/{}/integrations/{}/installations/{}/schedule',
    'GET /projects/{}/destinations/{}/attempts',
    'POST /oauth-connect',
    'PATCH /projects/{}/connections/{}:oauth-update',
    'GET /projects/{}/provider-apps',
    'POST /projects/{}/provider-apps',
    'PATCH /projects/{}/provider-apps/{}',
    'DELETE /projects/{}/provider-apps/{}',
    'PUT /projects/{}/providers/{}/object-metadata',
    'GET /projects/{}/providers/{}/objects/{}/metadata',
    'GET /projects/{}/integrations/{}/objects/{}/metadata',
    'PUT /projects/{}/integrations/{}/object-metadata',
    'GET /projects/{}/connections',
    'POST /projects/{}/connections:generate',
    'GET /projects/{}/connections/{}',
    'PATCH /projects/{}/connections/{}',
    'DELETE /projects/{}/connections/{}',
    'POST /projects/{}/destinations',
    'GET /projects/{}/destinations',
    'GET /projects/{}/destinations/{}',
    'PATCH /projects/{}/destinations/{}',
    'DELETE /projects/{}/destinations/{}',
    'POST /projects/{}/topics',
    'GET /projects/{}/topics',
    'PATCH /projects/{}/topics/{}',
    'DELETE /projects/{}/topics/{}',
    'POST /projects/{}/topic-destination-routes',
    'GET /projects/{}/topic-destination-routes',
    'DELETE /projects/{}/topic-destination-routes/{}',
    'POST /projects/{}/notification-event-topic-routes',
    'GET /projects/{}/notification-event-topic-routes',
    'DELETE /projects/{}/notification-event-topic-routes/{}',
    'GET /projects/{}/jwt-keys',
    'POST /projects/{}/jwt-keys',
    'GET /projects/{}/jwt-keys/{}',
    'PATCH /projects/{}/jwt-keys/{}',
    'DELETE /projects/{}/jwt-keys/{}',
    'POST /orgs/{}/invites',
    'GET /orgs/{}/invites',
    'GET /orgs/{}/invites/{}',
    'DELETE /orgs/{}/invites/{}',
    'POST /invites:accept',
    'PATCH /orgs/{}',
    'GET /orgs/{}/builders',
    'POST /orgs/{}/memberships',
    'GET /my-info',
    'POST /custom-auth/connect',
  ],
  read: [
    'POST /projects/{}/integrations/{}/objects/{}',
    'POST /projects/{}/integrations/{}/installations/{}:pause',
    'POST /projects/{}/integrations/{}/installations/{}:unpause',
    'POST /projects/{}/integrations/{}/objects/{}:deliverResults',
  ],
  write: ['POST /projects/{}/integrations/{}/objects/{}'],
  search: ['POST /projects/{}/integrations/{}'],
};

function operations(host: Host): string[] {
  const document = buildOpenApiDocument(
    host,
    allRoutes().filter((route) => (route.hosts ?? ['api']).includes(host)),
  );
  return Object.entries(document.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
    Object.keys(item).map(
      (method) => `${method.toUpperCase()} ${path.replace(/^\/v1/, '').replace(/\{\w+\}/g, '{}')}`,
    ),
  );
}

describe('the OpenAPI documents', () => {
  it.each(['api', 'read', 'write', 'search'] as const)(
    'list every endpoint of the spec and COMPAT.md on the %s host',
    (host) => {
      const documented = operations(host);
      const missing = expected[host].filter((endpoint) => !documented.includes(endpoint));
      expect(missing).toEqual([]);
    },
  );

  it.each(['api', 'read', 'write', 'search'] as const)(
    'list every operation of the public service’s %s document (the hosted service’s own answer 501)',
    (host) => {
      const documented = operations(host);
      const missing = new PublicApi()
        .operations()
        .filter((operation) => operation.host === host)
        .map((operation) => `${operation.method} ${operation.path.replace(/\{\w+\}/g, '{}')}`)
        .filter((endpoint) => !documented.includes(endpoint));
      expect(missing).toEqual([]);
    },
  );
});

describe('links from creates to what they created', () => {
  it('links each create to the reads, updates and deletes of the resource it made, by its id', () => {
    const api = allRoutes().filter((route) => !route.hosts || route.hosts.includes('api'));
    const document = buildOpenApiDocument('api', api) as {
      paths: Record<string, Record<string, { responses: Record<string, { links?: Record<string, any> }> }>>;
    };
    const links = document.paths['/v1/projects/{projectIdOrName}/destinations'].post.responses['201'].links!;
    expect(Object.keys(links).sort()).toEqual(['deleteDestination', 'getDestination', 'updateDestination']);
    expect(links.getDestination).toEqual({
      operationId: 'getDestination',
      parameters: {
        projectIdOrName: '$request.path.projectIdOrName',
        destinationNameOrId: '$response.body#/id',
      },
    });
    // Every link names an operation of the document.
    const operationIds = new Set(
      Object.values(document.paths).flatMap((item) => Object.values(item).map((op: any) => op.operationId)),
    );
    for (const item of Object.values(document.paths)) {
      for (const operation of Object.values(item)) {
        for (const link of Object.values(operation.responses['201']?.links ?? {})) {
          expect(operationIds.has(link.operationId)).toBe(true);
        }
      }
    }
  });
});

describe('what the api document describes', () => {
  const routes = allRoutes().filter((route) => !route.hosts || route.hosts.includes('api'));
  const document = buildOpenApiDocument('api', routes) as any;
  const operation = (id: string) =>
    Object.values(document.paths as Record<string, Record<string, any>>)
      .flatMap((item) => Object.values(item))
      .find((candidate) => candidate.operationId === id);

  it('names builder tokens and project JWTs as separate bearer schemes, on each endpoint as declared', () => {
    const schemes = document.components.securitySchemes;
    expect(Object.keys(schemes).sort()).toEqual(['apiKey', 'builderToken', 'projectJwt']);
    expect(schemes.builderToken).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(schemes.projectJwt).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const route of routes) {
      const expected = route.auth.includes('none')
        ? []
        : route.auth.map(
            (scheme) =>
              ({ bearer: 'builderToken', projectJwt: 'projectJwt', apiKey: 'apiKey' })[scheme as 'bearer'],
          );
      const documented = operation(route.operationId).security.map((entry: object) => Object.keys(entry)[0]);
      expect([route.operationId, documented.sort()]).toEqual([route.operationId, [...expected].sort()]);
    }
    // Starting an OAuth flow accepts all three kinds of credential, each its own entry.
    expect(operation('oauthUpdateConnection').security).toEqual([
      { apiKey: [] },
      { builderToken: [] },
      { projectJwt: [] },
    ]);
  });

  it('describes the installation config a create sends, not an opaque value', () => {
    const body = operation('createInstallation').requestBody.content['application/json'].schema;
    const content = body.properties.config.properties.content;
    expect(Object.keys(content.properties).sort()).toEqual([
      'provider',
      'proxy',
      'read',
      'subscribe',
      'write',
    ]);
    expect(JSON.stringify(content.properties.read)).toContain('selectedFields');
    expect(content.additionalProperties).toBe(false);
  });

  it('describes the manifest and the messages sent to webhook destinations', () => {
    const sourceYaml =
      operation('createRevision').requestBody.content['application/json'].schema.properties.sourceYaml;
    expect(sourceYaml.contentMediaType).toBe('application/yaml');
    expect(Object.keys(sourceYaml.contentSchema.properties).sort()).toEqual(['integrations', 'specVersion']);
    expect(JSON.stringify(sourceYaml.contentSchema)).toContain('requiredWatchFields');
    const records = document.webhooks.records.post.requestBody.content['application/json'].schema;
    expect(records.anyOf.map((message: any) => message.properties.action.const).sort()).toEqual([
      'read',
      'schema.watch',
      'subscribe',
    ]);
    expect(
      document.webhooks.notification.post.requestBody.content['application/json'].schema.properties,
    ).toHaveProperty('notificationType');
    // Only the api host lists them.
    expect(
      buildOpenApiDocument(
        'read',
        allRoutes().filter((route) => route.hosts?.includes('read')),
      ),
    ).not.toHaveProperty('webhooks');
  });
});
