import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import formatsPlugin from 'ajv-formats';

/**
 * The public service's OpenAPI documents (test/fixtures/public-api, see its SOURCE.md) as a strict
 * generated client reads them: a JSON Schema validator (Ajv) over each operation's declared answers
 * and each message kind. An answer they refuse is one such a client refuses.
 */

export type PublicHost = 'api' | 'read' | 'write' | 'search';
const documentNames = ['api', 'read', 'write', 'search', 'webhook', 'notifications', 'problem'] as const;
type DocumentName = (typeof documentNames)[number];

interface MediaType {
  schema?: unknown;
}
interface PublicResponse {
  content?: Record<string, MediaType>;
}
interface PublicOperation {
  operationId: string;
  responses: Record<string, PublicResponse>;
}

export interface OperationRef {
  host: PublicHost;
  method: string;
  /** The public path template, `/projects/{projectIdOrName}/…` (under `/v1`). */
  path: string;
  operationId: string;
}

const fixtures = join(process.cwd(), 'test', 'fixtures', 'public-api');

/**
 * Where the public documents cannot describe what Ferry answers, decided and documented (README,
 * "Compatibility with the public API"): each widens one schema, with why. Everything else is read
 * as published.
 */
export const documentedGaps: {
  document: DocumentName;
  at: string[];
  widen: { addToEnum: string[] } | 'oneOf as anyOf';
  why: string;
}[] = [
  {
    document: 'api',
    at: ['components', 'schemas', 'Connection', 'properties', 'authScheme'],
    widen: { addToEnum: ['custom', 'jwt'] },
    why: 'The public Connection.authScheme enum has no value for custom-input or JWT-bearer credentials, though the public API itself takes customAuth; Ferry names them rather than misname them.',
  },
  ...['IntegrationField', 'HydratedIntegrationField'].map((name) => ({
    document: 'api' as const,
    at: ['components', 'schemas', name],
    widen: 'oneOf as anyOf' as const,
    why: 'A provider field with a mapping ({fieldName, mapToName}) fits both branches of this oneOf, so exactly-one refuses every mapped field, the public service’s own included; generated clients take the first branch that fits.',
  })),
];

const documentId = (name: DocumentName) => `https://public-api.test/${name}.json`;

/** JSON Pointer segment → URI fragment segment. */
const pointer = (segment: string) => encodeURIComponent(segment.replace(/~/g, '~0').replace(/\//g, '~1'));

export class PublicApi {
  readonly documents: Record<DocumentName, any>;
  readonly #ajv: Ajv;
  readonly #compiled = new Map<string, ValidateFunction>();

  constructor() {
    this.documents = Object.fromEntries(
      documentNames.map((name) => [
        name,
        fromOpenApi30(JSON.parse(readFileSync(join(fixtures, `${name}.json`), 'utf8'))),
      ]),
    ) as Record<DocumentName, any>;
    // OpenAPI 3.0 schemas: `nullable` is understood; unknown keywords (`deprecated`, `readOnly`) ignored.
    this.#ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
    const addFormats = ((formatsPlugin as unknown as { default?: typeof formatsPlugin }).default ??
      formatsPlugin) as unknown as (ajv: Ajv) => void;
    addFormats(this.#ajv);
    this.#ajv.addFormat('pem', /^-----BEGIN [A-Z ]+-----[\s\S]+-----END [A-Z ]+-----\s*$/);
    for (const gap of documentedGaps) {
      const schema = gap.at.reduce((node, key) => node[key], this.documents[gap.document]);
      if (gap.widen === 'oneOf as anyOf') {
        schema.anyOf = schema.oneOf;
        delete schema.oneOf;
      } else schema.enum = [...schema.enum, ...gap.widen.addToEnum];
    }
    for (const name of documentNames) this.#ajv.addSchema(this.documents[name], documentId(name));
  }

  /** Every operation of the four hosts' documents. */
  operations(): OperationRef[] {
    return (['api', 'read', 'write', 'search'] as const).flatMap((host) =>
      Object.entries(this.documents[host].paths as Record<string, Record<string, PublicOperation>>).flatMap(
        ([path, methods]) =>
          Object.entries(methods)
            .filter(([, operation]) => operation && typeof operation === 'object' && operation.responses)
            .map(([method, operation]) => ({
              host,
              method: method.toUpperCase(),
              path,
              operationId: operation.operationId,
            })),
      ),
    );
  }

  /**
   * The public operation a concrete request reaches (`/projects/p1/integrations`, query left off):
   * of the templates that match, the one with the most literal text (`…/{objectName}:deliverResults`
   * over `…/{objectName}`).
   */
  operationFor(host: PublicHost, method: string, concretePath: string): OperationRef | undefined {
    const path = concretePath.split('?')[0];
    const literal = (template: string) => template.replace(/\{\w+\}/g, '').length;
    return this.operations()
      .filter(
        (operation) =>
          operation.host === host &&
          operation.method === method.toUpperCase() &&
          templatePattern(operation.path).test(path),
      )
      .sort((a, b) => literal(b.path) - literal(a.path))[0];
  }

  /**
   * What a strict client finds wrong with an answer: an undeclared status, a success in another
   * media type than declared, or a body its schema refuses. Empty when the answer is fine.
   */
  checkAnswer(
    operation: OperationRef,
    answer: { status: number; contentType: string | null; body: unknown },
  ): string[] {
    const responses = this.#operation(operation).responses;
    const status = String(answer.status);
    const declared = responses[status] ?? responses[`${status[0]}XX`] ?? responses.default;
    const where = `${operation.method} ${operation.path} answered ${answer.status}`;
    if (!declared) return [`${where}, which the public document does not declare`];
    const content = declared.content ?? {};
    const mediaTypes = Object.keys(content);
    if (!mediaTypes.length) {
      // Declared without content: a client reads no body (204) or ignores it.
      return [];
    }
    const type = (answer.contentType ?? '').split(';')[0].trim().toLowerCase();
    const mediaType = mediaTypes.find((candidate) => candidate === type);
    const success = answer.status < 400;
    if (!mediaType) {
      // Error answers are read by their status whatever their media type; successes must match.
      if (success)
        return [`${where} as "${type}", but the public document declares ${mediaTypes.join(', ')}`];
    }
    const chosen = mediaType ?? mediaTypes[0];
    if (!content[chosen].schema) return [];
    const responseKey = responses[status]
      ? status
      : responses[`${status[0]}XX`]
        ? `${status[0]}XX`
        : 'default';
    const ref = `${documentId(operation.host)}#/paths/${pointer(operation.path)}/${operation.method.toLowerCase()}/responses/${pointer(responseKey)}/content/${pointer(chosen)}/schema`;
    return this.#errors(ref, answer.body, where);
  }

  /**
   * `checkAnswer` for a response of the test helpers' `request`, by the request's host, method and
   * concrete path; a path the public document does not have is itself a problem.
   */
  checkResponse(
    host: PublicHost,
    method: string,
    concretePath: string,
    response: { status: number; headers: Headers; body: unknown },
  ): string[] {
    const operation = this.operationFor(host, method, concretePath);
    if (!operation) return [`the public ${host} document has no ${method} ${concretePath}`];
    return this.checkAnswer(operation, {
      status: response.status,
      contentType: response.headers.get('content-type'),
      body: response.body,
    });
  }

  /**
   * What the public document finds wrong with a request body, so a test speaks as a public client
   * does (a body it describes) and not only as Ferry allows.
   */
  checkRequest(operation: OperationRef, body: unknown): string[] {
    const content = (this.#operation(operation) as { requestBody?: { content?: Record<string, MediaType> } })
      .requestBody?.content?.['application/json'];
    if (!content?.schema || body === undefined) return [];
    const ref = `${documentId(operation.host)}#/paths/${pointer(operation.path)}/${operation.method.toLowerCase()}/requestBody/content/${pointer('application/json')}/schema`;
    return this.#errors(ref, body, `the request body of ${operation.method} ${operation.path}`);
  }

  /** A record, change-event or schema message as a webhook destination receives it. */
  checkWebhookMessage(body: unknown): string[] {
    return this.#errors(
      `${documentId('webhook')}#/components/schemas/WebhookMessage`,
      body,
      'webhook message',
    );
  }

  /** The notification types the public document describes, each with its payload schema's name. */
  notificationPayloads(): Map<string, string> {
    const schemas = this.documents.notifications.components.schemas as Record<string, any>;
    const payloads = new Map<string, string>();
    for (const [name, schema] of Object.entries(schemas)) {
      const types: string[] | undefined = schema.properties?.notificationType?.enum;
      if (name.endsWith('NotificationPayload') && types) for (const type of types) payloads.set(type, name);
    }
    return payloads;
  }

  /** A notification as a webhook destination receives it, against the payload of its type. */
  checkNotification(body: { notificationType?: unknown; data?: unknown }): string[] {
    const name = this.notificationPayloads().get(String(body.notificationType));
    if (!name) return [`no public payload schema for notification type ${String(body.notificationType)}`];
    return this.#errors(
      `${documentId('notifications')}#/components/schemas/${name}`,
      body,
      `notification ${String(body.notificationType)}`,
    );
  }

  #operation(operation: OperationRef): PublicOperation {
    return this.documents[operation.host].paths[operation.path][operation.method.toLowerCase()];
  }

  #errors(ref: string, value: unknown, where: string): string[] {
    let validate = this.#compiled.get(ref);
    if (!validate) {
      validate = this.#ajv.compile({ $ref: ref });
      this.#compiled.set(ref, validate);
    }
    if (validate(value)) return [];
    return describe(validate.errors ?? [], value).map((error) => `${where}: ${error}`);
  }
}

/**
 * OpenAPI 3.0 keeps draft 4's boolean `exclusiveMinimum`/`exclusiveMaximum` (a flag on `minimum`/
 * `maximum`); Ajv reads today's JSON Schema, where they are the bounds themselves.
 */
function fromOpenApi30(value: any): any {
  if (Array.isArray(value)) return value.map(fromOpenApi30);
  if (!value || typeof value !== 'object') return value;
  const converted: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) converted[key] = fromOpenApi30(inner);
  for (const [flag, bound] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (typeof converted[flag] !== 'boolean') continue;
    if (converted[flag]) converted[flag] = converted[bound];
    else delete converted[flag];
    if (converted[flag] !== undefined) delete converted[bound];
  }
  return converted;
}

function templatePattern(template: string): RegExp {
  const escaped = template
    .split(/(\{\w+\})/)
    .map((part) => (/^\{\w+\}$/.test(part) ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('');
  return new RegExp(`^${escaped}$`);
}

/** Ajv's errors, each with the value it refused; `oneOf` branches' noise folded into the outcome. */
function describe(errors: ErrorObject[], root: unknown): string[] {
  return errors.map((error) => {
    const at = error.instancePath || '(the body)';
    const value = error.instancePath
      .split('/')
      .slice(1)
      .reduce<unknown>(
        (node, key) =>
          node && typeof node === 'object'
            ? (node as Record<string, unknown>)[key.replace(/~1/g, '/')]
            : undefined,
        root,
      );
    const shown = JSON.stringify(value);
    return `${at} ${error.message}${error.params && Object.keys(error.params).length ? ` ${JSON.stringify(error.params)}` : ''} (got ${shown === undefined ? 'nothing' : shown.length > 200 ? `${shown.slice(0, 200)}…` : shown})`;
  });
}
