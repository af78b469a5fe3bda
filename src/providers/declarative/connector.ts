import { stringify as formEncode } from 'qs';
import type { ConnectionTarget } from '../auth-material.js';
import { declaredCapabilities, effectiveObject } from '../catalog/connector-declarations.js';
import { getProvider, type Provider } from '../catalog/index.js';
import type {
  ChangeTracking,
  Connector,
  ConnectorOptions,
  CountInput,
  IncomingProviderEvent,
  ProviderRecord,
  ProxyRequest,
  ProxyResponse,
  ProxyStreamResponse,
  ReadPageInput,
  ReadPageResult,
  SearchInput,
  SearchPageResult,
  SubscribeInput,
  Subscription,
  WriteInput,
  WriteResult,
} from '../connector.js';
import { CapabilityNotSupportedError, ConnectorInputError, ProviderError } from '../errors.js';
import { ProviderHttpClient, type HttpMethod, type ProviderHttpRequest } from '../http.js';
import type { Capability, ConnectorCapabilities } from '../../schemas/capabilities.js';
import type {
  ConnectorDeclaration,
  DeclaredRequest,
  Listing,
  ObjectDeclaration,
  Pagination,
  WebhooksDeclaration,
} from '../../schemas/connector-declaration.js';
import type {
  CustomFieldDefinition,
  ObjectMetadata,
  UpsertCustomFieldsResult,
} from '../../schemas/object-metadata.js';
import { holds } from './field-metadata.js';
import { recordValues } from './field-values.js';
import type { HookContext } from './context.js';
import type { ConnectorHooks } from './hooks.js';
import { firstValueAt, valueAt } from './json-pointer.js';
import { declaredMetadata } from './metadata.js';
import { pacer } from './pacing.js';
import { proxied } from './proxy.js';
import { rateLimitWait } from './rate-limit.js';
import { changeTracking, readDeclaredPage } from './read.js';
import { searchDeclared } from './search.js';
import { ABSENT, renderJson, renderString, SPREAD, type TemplateValues } from './template.js';
import { isoTime } from './times.js';
import {
  checkSignature,
  readWebhookEvents,
  registerWebhook,
  renewWebhook,
  unregisterWebhook,
  type WebhookRequest,
} from './webhooks.js';
import { sendsIdempotencyKey, targetRecordId, writeDeclared, writeValues } from './write.js';

export type { ConnectorHooks } from './hooks.js';

/**
 * The connector of every catalog provider: what its declaration says, plus its hooks. A provider
 * with no declaration can only proxy; asked for anything else it answers CapabilityNotSupportedError.
 */
export class DeclaredConnector implements Connector, HookContext {
  readonly provider: string;
  readonly capabilities: Readonly<ConnectorCapabilities>;
  readonly catalog: Provider;
  readonly http: ProviderHttpClient;

  constructor(
    private readonly target: ConnectionTarget,
    options: ConnectorOptions,
    readonly declaration: ConnectorDeclaration | undefined,
    private readonly hooks: ConnectorHooks = {},
  ) {
    const catalog = getProvider(target.provider);
    if (!catalog) throw new Error(`Provider "${target.provider}" is not in Ferry's catalog.`);
    this.provider = catalog.name;
    this.catalog = catalog;
    const messagePointers = declaration?.errorMessage;
    const rateLimit = declaration?.rateLimit;
    const errorsInBody = declaration?.errorsInBody;
    this.http = new ProviderHttpClient(catalog, target, {
      onRequest: options.onRequest,
      baseUrl: options.baseUrl,
      retry: options.retry,
      timeoutMs: options.timeoutMs,
      ...(messagePointers && {
        errorMessage: (body: unknown) => {
          for (const pointer of messagePointers) {
            const message = valueAt(body, pointer);
            if (typeof message === 'string' && message.trim()) return message.trim().slice(0, 500);
          }
          return undefined;
        },
      }),
      ...(rateLimit && {
        rateLimitWait: (headers: Record<string, string>) => rateLimitWait(rateLimit, headers),
      }),
      ...(errorsInBody && { bodyStatus: (body: unknown) => statusInBody(errorsInBody, body) }),
      ...(declaration?.errorDetails && { errorDetails: firstValue(declaration.errorDetails) }),
      ...(declaration?.pacing && {
        pace: pacer(declaration.pacing, `${catalog.name}:${target.connectionId ?? 'unstored'}`),
      }),
    });
    this.capabilities = Object.freeze({
      ...(declaration
        ? declaredCapabilities(declaration)
        : {
            read: false,
            write: false,
            delete: false,
            objectMetadata: false,
            customFields: false,
            subscribe: false,
            count: false,
            search: false,
          }),
      proxy: catalog.support.proxy,
    });
  }

  /** The connection this connector serves, when it is a stored one (hooks key what they remember by it). */
  get connectionId(): string | undefined {
    return this.target.connectionId;
  }

  unsupported(capability: Capability | string, detail?: string): CapabilityNotSupportedError {
    return new CapabilityNotSupportedError(this.provider, capability, detail);
  }

  /** An object's declaration (defaults merged); a 404 ProviderError for an object the provider lacks. */
  object(objectName: string): ObjectDeclaration {
    const object = this.declaration && effectiveObject(this.declaration, objectName);
    if (!object) {
      throw new ProviderError(
        this.provider,
        `Provider "${this.provider}" has no object "${objectName}" in Ferry.`,
        {
          status: 404,
          retryable: false,
        },
      );
    }
    return object;
  }

  /** Sends a declared request (rendered with `values`) and returns the 2xx answer. */
  async send(objectName: string, request: ProviderHttpRequest) {
    const module = this.declaration && effectiveObject(this.declaration, objectName)?.module;
    try {
      return await this.http.json(module && !request.module ? { ...request, module } : request);
    } catch (error) {
      if (error instanceof ProviderError && this.hooks.providerError) {
        throw this.hooks.providerError(this, objectName, error);
      }
      throw error;
    }
  }

  /** A declared request with its templates filled in. */
  request(declared: DeclaredRequest, values: TemplateValues, idempotent?: boolean): ProviderHttpRequest {
    const path = declared.path.replace(/\{\{[^}]+\}\}/g, (placeholder) => {
      const value = renderString(placeholder, values);
      if (value === ABSENT)
        throw new ConnectorInputError(`${declared.path} needs ${placeholder}`, this.provider);
      // `|path`: a value that is itself a path keeps its slashes (Google's `people/c123` resource names).
      if (/\|\s*path\s*(\||\}\})/.test(placeholder)) {
        const segments = String(value).split('/');
        if (segments.some((segment) => segment === '' || segment === '.' || segment === '..'))
          throw new ConnectorInputError(
            `${placeholder} is not a resource path: ${String(value)}`,
            this.provider,
          );
        return segments.map(encodeURIComponent).join('/');
      }
      return encodeURIComponent(String(value));
    });
    const query: Record<string, string> = {};
    for (const [name, template] of Object.entries(declared.query ?? {})) {
      if (name === SPREAD) {
        // `"...": "{{filters}}"`: an object's members become parameters (ActiveCampaign's `?email=`).
        // A list of `equals` clauses (Insightly's `{field_name, field_value}`) spreads each clause;
        // two clauses naming one parameter are refused, since the provider would keep one.
        const spread = renderString(template, values, true);
        const objects = Array.isArray(spread) ? spread : [spread];
        for (const object of objects) {
          if (!object || typeof object !== 'object' || Array.isArray(object)) continue;
          for (const [key, value] of Object.entries(object)) {
            if (value === undefined || value === null) continue;
            if (Array.isArray(spread) && Object.hasOwn(query, key))
              throw new ConnectorInputError(`${declared.path} takes one value of "${key}"`, this.provider);
            query[key] = queryText(value);
          }
        }
        continue;
      }
      const value = renderString(template, values);
      if (value !== ABSENT) query[name] = String(value);
    }
    const headers: Record<string, string> = {};
    for (const [name, template] of Object.entries(declared.headers ?? {})) {
      const value = renderString(template, values);
      if (value !== ABSENT) headers[name] = String(value);
    }
    const body = declared.body === undefined ? undefined : renderJson(declared.body, values);
    return {
      method: declared.method as HttpMethod,
      path,
      query,
      headers,
      ...(body !== undefined &&
        (declared.encoding === 'form'
          ? {
              body: formEncode(body),
              headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
            }
          : { json: body })),
      ...(idempotent !== undefined && { idempotent }),
    };
  }

  /**
   * A provider's next-page URL, only ever on the provider's own origin: credentials go nowhere else.
   * Rebased (`rebase`), a link naming another host has its path and query fetched from the base URL.
   */
  nextPageUrl(url: string, pagination?: Pagination): string {
    const base = new URL(this.http.baseUrl());
    let next = new URL(url, base.origin);
    if (pagination?.style === 'nextUrl' && pagination.rebase) {
      const prefix = base.pathname.replace(/\/$/, '');
      const path =
        prefix && !next.pathname.startsWith(`${prefix}/`) ? `${prefix}${next.pathname}` : next.pathname;
      next = new URL(`${path}${next.search}`, base.origin);
    }
    if (next.origin !== base.origin) {
      throw new ProviderError(
        this.provider,
        `Provider "${this.provider}" gave a next page on another host (${next.host}).`,
        {
          retryable: false,
        },
      );
    }
    return next.toString();
  }

  templateValues(objectName: string, object: ObjectDeclaration): TemplateValues {
    return { object: objectName, vars: object.vars ?? {}, connection: this.target.templateVars };
  }

  record(
    object: ObjectDeclaration,
    item: unknown,
    listing?: Pick<Listing, 'record' | 'updated' | 'deleted'>,
  ): ProviderRecord {
    const raw = (listing?.record ? valueAt(item, listing.record) : item) as Record<string, unknown>;
    const id = firstValueAt(raw, object.id ?? '/id');
    const updatedFrom = listing?.updated
      ? { source: item, ...listing.updated }
      : object.updated && { source: raw, ...object.updated };
    const updated =
      updatedFrom && isoTime(valueAt(updatedFrom.source, updatedFrom.field), updatedFrom.format);
    const deleted =
      (object.deleted !== undefined && holds(object.deleted, raw)) ||
      (listing?.deleted !== undefined && holds(listing.deleted, item));
    const values = recordValues(raw, object.values);
    return {
      id: String(id),
      ...(updated && { updatedAt: updated }),
      raw,
      ...(deleted && { deleted }),
      ...(values && { values }),
    };
  }

  async readPage(input: ReadPageInput): Promise<ReadPageResult> {
    const declared = () => this.readDeclaredPage(input);
    return this.hooks.readPage ? this.hooks.readPage(this, input, declared) : declared();
  }

  /** One page as the declaration says (see `read.ts`); `parent` is the record a hook reads within. */
  readDeclaredPage(input: ReadPageInput, parent?: string): Promise<ReadPageResult> {
    return readDeclaredPage(this, input, parent);
  }

  changeTracking(objectName: string): ChangeTracking {
    if (!this.capabilities.read) throw this.unsupported('read');
    return changeTracking(this.object(objectName));
  }

  /** One page of records matching every filter: the provider's hook, or the object's `search`. */
  async search(input: SearchInput): Promise<SearchPageResult> {
    const declared = () => this.searchDeclared(input);
    return this.hooks.search ? this.hooks.search(this, input, declared) : declared();
  }

  /** One page of records matching every filter, as the object's `search` declares. */
  searchDeclared(input: SearchInput): Promise<SearchPageResult> {
    return searchDeclared(this, input);
  }

  async readRecord(objectName: string, recordId: string): Promise<ProviderRecord | undefined> {
    if (!this.capabilities.read) throw this.unsupported('read');
    const object = this.object(objectName);
    const get = object.read?.get;
    if (!get)
      throw this.unsupported(
        'read',
        `Ferry cannot read one ${objectName} record by id at "${this.provider}".`,
      );
    try {
      const response = await this.send(
        objectName,
        this.request(get.request, { ...this.templateValues(objectName, object), id: recordId }, true),
      );
      const raw = valueAt(response.body, get.record);
      return raw && typeof raw === 'object' ? this.record(object, raw) : undefined;
    } catch (error) {
      if (error instanceof ProviderError && error.isNotFound) return undefined;
      throw error;
    }
  }

  /** The window's clauses for the times given, joined as declared. */
  window(declared: { window?: Listing['window'] }, values: TemplateValues): unknown {
    const window = declared.window;
    if (!window) return undefined;
    const clauses = (['since', 'until'] as const)
      .filter((bound) => values[bound] !== undefined && window[bound] !== undefined)
      .map((bound) => renderJson(window[bound], values));
    if (window.prefix !== undefined && window.join !== undefined)
      return clauses.length ? `${window.prefix}${clauses.map(String).join(window.join)}` : '';
    if (window.join !== undefined) return clauses.length ? clauses.map(String).join(window.join) : undefined;
    return clauses;
  }

  async estimateCount(input: CountInput): Promise<number | undefined> {
    if (!this.capabilities.count) return undefined;
    if (this.hooks.estimateCount) return this.hooks.estimateCount(this, input);
    const object = this.object(input.objectName);
    const count = object.read?.count;
    if (!count) return undefined;
    const values: TemplateValues = {
      ...this.templateValues(input.objectName, object),
      since: input.since,
      until: input.until,
    };
    values.window = this.window(count, values);
    const response = await this.send(input.objectName, this.request(count.request, values, true));
    const total = Number(valueAt(response.body, count.total));
    return Number.isFinite(total) ? total : undefined;
  }

  async write(input: WriteInput): Promise<WriteResult> {
    const declared = () => this.writeDeclared(input);
    return this.hooks.write ? this.hooks.write(this, input, declared) : declared();
  }

  honoursIdempotencyKey(objectName: string, type: WriteInput['type']): boolean {
    const object = this.declaration && effectiveObject(this.declaration, objectName);
    return sendsIdempotencyKey(object?.write?.[type]);
  }

  /** The id an update or delete targets: `recordId`, else `record.id` (updates only). */
  targetRecordId(input: WriteInput): string {
    return targetRecordId(this, input);
  }

  /** The field values of a create or update, without the id, folded into their containers. */
  writeValues(input: WriteInput): Record<string, unknown> {
    return writeValues(this, input);
  }

  writeDeclared(input: WriteInput): Promise<WriteResult> {
    return writeDeclared(this, input);
  }

  async listObjectMetadata(objectName: string): Promise<ObjectMetadata> {
    const declared = () => this.declaredMetadata(objectName);
    return this.hooks.listObjectMetadata
      ? this.hooks.listObjectMetadata(this, objectName, declared)
      : declared();
  }

  declaredMetadata(objectName: string): Promise<ObjectMetadata> {
    return declaredMetadata(this, objectName);
  }

  async upsertCustomFields(
    objectName: string,
    fields: CustomFieldDefinition[],
  ): Promise<UpsertCustomFieldsResult> {
    if (!this.capabilities.customFields || !this.hooks.upsertCustomFields)
      throw this.unsupported('customFields');
    return this.hooks.upsertCustomFields(this, objectName, fields);
  }

  /** The declared webhooks, when the provider's change events are data rather than hooks. */
  private webhooks(): WebhooksDeclaration {
    const webhooks = this.capabilities.subscribe ? this.declaration?.webhooks : undefined;
    if (!webhooks) throw this.unsupported('subscribe');
    return webhooks;
  }

  private webhookValues(objectName: string): TemplateValues {
    const object = this.declaration && effectiveObject(this.declaration, objectName);
    return this.templateValues(objectName, object ?? {});
  }

  async subscribe(input: SubscribeInput): Promise<Subscription> {
    if (this.hooks.subscribe && this.capabilities.subscribe) return this.hooks.subscribe(this, input);
    return registerWebhook(this, this.webhooks(), input, this.webhookValues(input.objectName));
  }

  async updateSubscription(subscriptionId: string, input: SubscribeInput): Promise<Subscription> {
    if (this.hooks.updateSubscription && this.capabilities.subscribe)
      return this.hooks.updateSubscription(this, subscriptionId, input);
    return registerWebhook(
      this,
      this.webhooks(),
      input,
      this.webhookValues(input.objectName),
      subscriptionId,
    );
  }

  async deleteSubscription(subscriptionId: string): Promise<void> {
    if (this.hooks.deleteSubscription && this.capabilities.subscribe)
      return this.hooks.deleteSubscription(this, subscriptionId);
    return unregisterWebhook(this, this.webhooks(), subscriptionId, this.webhookValues(''));
  }

  async renewSubscription(subscriptionId: string): Promise<string | undefined> {
    if (this.hooks.subscribe && this.capabilities.subscribe) return undefined;
    return renewWebhook(this, this.webhooks(), subscriptionId, this.webhookValues(''));
  }

  verifyWebhook(
    headers: Record<string, string | string[] | undefined>,
    rawBody: string | Buffer,
    secret: string,
    request?: WebhookRequest,
  ): IncomingProviderEvent[] {
    if (this.hooks.verifyWebhook && this.capabilities.subscribe)
      return this.hooks.verifyWebhook(this, headers, rawBody, secret);
    const webhooks = this.webhooks();
    const body = Buffer.isBuffer(rawBody) ? rawBody : Buffer.from(rawBody);
    checkSignature(this.provider, webhooks.signature, headers, body, secret, Date.now(), request);
    return readWebhookEvents(this.provider, webhooks, body, headers, request?.objectName);
  }

  async proxy(request: ProxyRequest): Promise<ProxyResponse> {
    const response = await this.http.send(proxied(this, request));
    return { status: response.status, headers: response.headers, body: response.rawBody };
  }

  async proxyStream(request: ProxyRequest): Promise<ProxyStreamResponse> {
    return this.http.stream(proxied(this, request));
  }
}

/** A spread query member's value as a parameter: text as it is, anything else as JSON. */
function queryText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The first value found at one of `pointers` (tried in order), or undefined. */
function firstValue(pointers: readonly string[]): (body: unknown) => unknown {
  return (body) => {
    for (const pointer of pointers) {
      const value = valueAt(body, pointer);
      if (value !== undefined && value !== null) return value;
    }
    return undefined;
  };
}

/** The status of a 2xx answer whose body reports a failure, as the declaration's `errorsInBody` says. */
export function statusInBody(
  rules: NonNullable<ConnectorDeclaration['errorsInBody']>,
  body: unknown,
): number | undefined {
  for (const rule of rules) {
    const error = valueAt(body, rule.at);
    if (error === undefined || error === null) continue;
    const code = rule.code === undefined ? undefined : valueAt(error, rule.code);
    const mapped = typeof code === 'string' && rule.codes && Object.hasOwn(rule.codes, code);
    return mapped ? rule.codes![code as string] : rule.status;
  }
  return undefined;
}
