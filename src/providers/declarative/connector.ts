import { stringify as formEncode } from 'qs';
import type { ConnectionTarget } from '../auth-material.js';
import { effectiveObject } from '../catalog/connector-declarations.js';
import { getProvider, type Provider } from '../catalog/index.js';
import type {
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
import { decodePageToken, encodePageToken } from '../page-token.js';
import { CapabilityNotSupportedError, ConnectorInputError, ProviderError } from '../errors.js';
import { ProviderHttpClient, type HttpMethod, type ProviderHttpRequest } from '../http.js';
import type { Capability, ConnectorCapabilities } from '../../schemas/capabilities.js';
import type {
  ConnectorDeclaration,
  DeclaredRequest,
  Listing,
  ObjectDeclaration,
  Pagination,
  SearchDeclaration,
  WebhooksDeclaration,
} from '../../schemas/connector-declaration.js';
import type {
  CustomFieldDefinition,
  FieldMetadata,
  ObjectMetadata,
  UpsertCustomFieldsResult,
} from '../../schemas/object-metadata.js';
import { declaredCapabilities } from '../catalog/connector-declarations.js';
import { describedField, holds, staticField } from './field-metadata.js';
import { valueAt } from './json-pointer.js';
import { firstPageState, nextPageState, pageValues, type PageState } from './pagination.js';
import { ABSENT, placeholdersOf, renderJson, renderString, SPREAD, type TemplateValues } from './template.js';
import { isoTime } from './times.js';
import { rateLimitWait } from './rate-limit.js';
import {
  checkSignature,
  readWebhookEvents,
  registerWebhook,
  unregisterWebhook,
  type WebhookRequest,
} from './webhooks.js';

/**
 * Code for one provider's quirks, beside its declaration. Each hook receives the declared behaviour
 * (`declared`) so it can wrap it or fall back on it; a capability a declaration names under
 * `hooks.capabilities` is the hook's alone (custom fields, subscriptions).
 */
export interface ConnectorHooks {
  readPage?(
    connector: DeclaredConnector,
    input: ReadPageInput,
    declared: () => Promise<ReadPageResult>,
  ): Promise<ReadPageResult>;
  search?(
    connector: DeclaredConnector,
    input: SearchInput,
    declared: () => Promise<SearchPageResult>,
  ): Promise<SearchPageResult>;
  write?(
    connector: DeclaredConnector,
    input: WriteInput,
    declared: () => Promise<WriteResult>,
  ): Promise<WriteResult>;
  listObjectMetadata?(
    connector: DeclaredConnector,
    objectName: string,
    declared: () => Promise<ObjectMetadata>,
  ): Promise<ObjectMetadata>;
  estimateCount?(connector: DeclaredConnector, input: CountInput): Promise<number | undefined>;
  upsertCustomFields?(
    connector: DeclaredConnector,
    objectName: string,
    fields: CustomFieldDefinition[],
  ): Promise<UpsertCustomFieldsResult>;
  subscribe?(connector: DeclaredConnector, input: SubscribeInput): Promise<Subscription>;
  updateSubscription?(
    connector: DeclaredConnector,
    subscriptionId: string,
    input: SubscribeInput,
  ): Promise<Subscription>;
  deleteSubscription?(connector: DeclaredConnector, subscriptionId: string): Promise<void>;
  verifyWebhook?(
    connector: DeclaredConnector,
    headers: Record<string, string | string[] | undefined>,
    rawBody: string | Buffer,
    secret: string,
  ): IncomingProviderEvent[];
  /** A provider failure said more clearly (HubSpot's "unable to infer object type" is a 404). */
  providerError?(connector: DeclaredConnector, objectName: string, error: ProviderError): ProviderError;
}

/** Headers a proxied request must not pass on: hop-by-hop ones and the caller's own credentials. */
const unforwardedHeaders = new Set([
  'authorization',
  'connection',
  'content-length',
  'cookie',
  'host',
  'keep-alive',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'x-api-key',
]);

const proxyMethods = new Set<string>(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** A read's position between pages: which listing, where it stands, and the query it continues. */
interface ReadToken extends Record<string, unknown> {
  o: string;
  l: 'list' | 'incremental';
  s: PageState;
  since?: number;
  until?: number;
  n: number;
  f?: string[];
  /** Deletions are listed too. */
  d?: boolean;
}

/** A search's position between pages, with the query it continues. */
interface SearchToken extends Record<string, unknown> {
  o: string;
  k: 'search';
  s: PageState;
  w: { fieldName: string; value: unknown }[];
  n: number;
  f?: string[];
}

/**
 * The connector of every catalog provider: what its declaration says, plus its hooks. A provider
 * with no declaration can only proxy; asked for anything else it answers CapabilityNotSupportedError.
 */
export class DeclaredConnector implements Connector {
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
    try {
      return await this.http.json(request);
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
      return encodeURIComponent(String(value));
    });
    const query: Record<string, string> = {};
    for (const [name, template] of Object.entries(declared.query ?? {})) {
      if (name === SPREAD) {
        // `"...": "{{filters}}"`: an object's members become parameters (ActiveCampaign's `?email=`).
        const spread = renderString(template, values, true);
        if (spread && typeof spread === 'object' && !Array.isArray(spread)) {
          for (const [key, value] of Object.entries(spread)) {
            if (value !== undefined && value !== null) query[key] = queryText(value);
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
  private nextPageUrl(url: string, pagination?: Pagination): string {
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

  private templateValues(objectName: string, object: ObjectDeclaration): TemplateValues {
    return { object: objectName, vars: object.vars ?? {}, connection: this.target.templateVars };
  }

  record(
    object: ObjectDeclaration,
    item: unknown,
    listing?: Pick<Listing, 'record' | 'updated' | 'deleted'>,
  ): ProviderRecord {
    const raw = (listing?.record ? valueAt(item, listing.record) : item) as Record<string, unknown>;
    const id = valueAt(raw, object.id ?? '/id');
    const updatedFrom = listing?.updated
      ? { source: item, ...listing.updated }
      : object.updated && { source: raw, ...object.updated };
    const updated =
      updatedFrom && isoTime(valueAt(updatedFrom.source, updatedFrom.field), updatedFrom.format);
    const deleted =
      (object.deleted !== undefined && holds(object.deleted, raw)) ||
      (listing?.deleted !== undefined && holds(listing.deleted, item));
    return {
      id: String(id),
      ...(updated && { updatedAt: updated }),
      raw,
      ...(deleted && { deleted }),
    };
  }

  async readPage(input: ReadPageInput): Promise<ReadPageResult> {
    const declared = () => this.readDeclaredPage(input);
    return this.hooks.readPage ? this.hooks.readPage(this, input, declared) : declared();
  }

  /**
   * One page as the declaration says: the listing, its page, its records inside the window.
   * `parent` is the record a hook reads within (`{{parent}}`: Asana's project); the hook passes it
   * again with every page token, which does not carry it.
   */
  async readDeclaredPage(input: ReadPageInput, parent?: string): Promise<ReadPageResult> {
    if (!this.capabilities.read) throw this.unsupported('read');
    const object = this.object(input.objectName);
    if (!object.read)
      throw this.unsupported('read', `Ferry cannot read ${input.objectName} from "${this.provider}".`);
    const token = input.pageToken
      ? decodePageToken<ReadToken>(input.pageToken, this.provider, input.objectName)
      : undefined;
    const which = token?.l ?? (input.since && object.read.incremental ? 'incremental' : 'list');
    const declaredListing = which === 'incremental' ? object.read.incremental! : object.read.list;
    // Pages after the first may be asked for another way (`following`).
    const listing =
      token && declaredListing.following
        ? { ...declaredListing, ...declaredListing.following }
        : declaredListing;
    const since = token ? (token.since === undefined ? undefined : new Date(token.since)) : input.since;
    const until = token ? (token.until === undefined ? undefined : new Date(token.until)) : input.until;
    const pageSize =
      token?.n ?? Math.max(listing.pageSize.min ?? 1, Math.min(input.pageSize, listing.pageSize.max));
    const fields = token ? token.f : input.fields;
    const includeDeleted = token ? token.d : input.includeDeleted;
    const state = token?.s ?? firstPageState(listing.pagination);

    const values: TemplateValues = {
      ...this.templateValues(input.objectName, object),
      since,
      until,
      pageSize,
      ...(fields?.length && { fields }),
      ...(includeDeleted && { includeDeleted: 'true' }),
      ...(parent !== undefined && { parent }),
      ...pageValues(state),
    };
    if (listing.window) values.window = this.window(listing, values);
    const request = state.url
      ? {
          ...this.request({ ...listing.request, method: 'GET', query: {}, body: undefined }, values, true),
          path: this.nextPageUrl(state.url, listing.pagination),
        }
      : this.request(listing.request, values, true);
    const response = await this.send(input.objectName, request);
    const listed = valueAt(response.body, listing.records);
    const items = Array.isArray(listed) ? listed : [];
    const records = listedRecords(
      items.map((item) => this.record(object, item, listing)),
      listing,
      includeDeleted === true,
    );
    const next = nextPageState(listing.pagination, state, {
      body: response.body,
      headers: response.headers,
      items,
      ids: items.map((item) => String(valueAt(item, object.id ?? '/id'))),
      pageSize,
    });
    const inWindow = records.filter((record) => withinWindow(record, since, until));
    // Newest first without a filter: the first record older than the window ends the read.
    const passedWindow =
      listing.newestFirst &&
      since &&
      records.some((record) => record.updatedAt && Date.parse(record.updatedAt) < since.getTime());
    // Oldest first without an upper bound: the first record at or after `until` ends the read.
    const pastUntil =
      listing.oldestFirst &&
      until &&
      records.some((record) => record.updatedAt && Date.parse(record.updatedAt) >= until.getTime());
    if (!next || passedWindow || pastUntil) return { records: inWindow, done: true };
    const nextToken: ReadToken = {
      o: input.objectName,
      l: which,
      s: next,
      ...(since && { since: since.getTime() }),
      ...(until && { until: until.getTime() }),
      n: pageSize,
      ...(fields?.length && { f: fields }),
      ...(includeDeleted && { d: true }),
    };
    return { records: inWindow, nextPageToken: encodePageToken(nextToken), done: false };
  }

  /** One page of records matching every filter: the provider's hook, or the object's `search`. */
  async search(input: SearchInput): Promise<SearchPageResult> {
    const declared = () => this.searchDeclared(input);
    return this.hooks.search ? this.hooks.search(this, input, declared) : declared();
  }

  /** One page of records matching every filter, as the object's `search` declares. */
  async searchDeclared(input: SearchInput): Promise<SearchPageResult> {
    if (!this.capabilities.search) throw this.unsupported('search');
    const object = this.object(input.objectName);
    const search = object.search;
    if (!search)
      throw this.unsupported(
        'search',
        `Ferry cannot search ${input.objectName} records at "${this.provider}".`,
      );
    const token = input.pageToken
      ? decodePageToken<SearchToken>(input.pageToken, this.provider, input.objectName)
      : undefined;
    if (token && token.k !== 'search') {
      throw new ConnectorInputError(
        'The page token was not issued by a search; pass back nextPageToken unchanged.',
        this.provider,
      );
    }
    const filters = token?.w ?? input.filters;
    const fields = token ? token.f : input.fields;
    const pageSize = token?.n ?? Math.max(1, Math.min(input.pageSize, search.pageSize.max));
    const state = token?.s ?? firstPageState(search.pagination);
    const base = this.templateValues(input.objectName, object);
    const values: TemplateValues = {
      ...base,
      filters: this.searchFilters(input.objectName, search, filters, base),
      pageSize,
      ...(fields?.length && { fields }),
      ...pageValues(state),
    };
    const request = state.url
      ? {
          ...this.request({ ...search.request, method: 'GET', query: {}, body: undefined }, values, true),
          path: this.nextPageUrl(state.url, search.pagination),
        }
      : this.request(search.request, values, true);
    const response = await this.send(input.objectName, request);
    const listed = valueAt(response.body, search.records);
    const items = Array.isArray(listed) ? listed : [];
    const next = nextPageState(search.pagination, state, {
      body: response.body,
      headers: response.headers,
      items,
      ids: items.map((item) => String(valueAt(item, object.id ?? '/id'))),
      pageSize,
    });
    const records = items.map((item) => this.record(object, item, { record: search.record }));
    if (!next) return { records };
    const nextToken: SearchToken = {
      o: input.objectName,
      k: 'search',
      s: next,
      w: filters,
      n: pageSize,
      ...(fields?.length && { f: fields }),
    };
    return { records, nextPageToken: encodePageToken(nextToken) };
  }

  /**
   * The filters as the request carries them: the `equals` clauses (a list, or joined), or the
   * `members` of each filter merged into one object. A field without members cannot be searched,
   * and two filters writing the same member are refused: the provider would keep only one.
   */
  private searchFilters(
    objectName: string,
    search: SearchDeclaration,
    filters: { fieldName: string; value: unknown }[],
    base: TemplateValues,
  ): unknown {
    const valuesOf = (filter: { fieldName: string; value: unknown }) => ({
      ...base,
      field: filter.fieldName,
      value: filter.value,
    });
    const members = search.members;
    if (!members) {
      const clauses = filters.map((filter) => renderJson(search.equals, valuesOf(filter)));
      return search.join === undefined ? clauses : clauses.map(String).join(search.join);
    }
    const merged: Record<string, unknown> = {};
    for (const filter of filters) {
      if (!Object.hasOwn(members, filter.fieldName)) {
        throw new ConnectorInputError(
          `"${this.provider}" cannot search ${objectName} by "${filter.fieldName}"; it searches by ${Object.keys(
            members,
          )
            .map((name) => `"${name}"`)
            .join(', ')}.`,
          this.provider,
        );
      }
      const rendered = renderJson(members[filter.fieldName], valuesOf(filter)) as Record<string, unknown>;
      for (const [key, value] of Object.entries(rendered)) {
        if (Object.hasOwn(merged, key)) {
          throw new ConnectorInputError(
            `"${this.provider}" takes one filter on "${key}" when searching ${objectName}; "${filter.fieldName}" would be a second.`,
            this.provider,
          );
        }
        merged[key] = value;
      }
    }
    return merged;
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
  private window(declared: { window?: Listing['window'] }, values: TemplateValues): unknown {
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
    const operation = object?.write?.[type];
    return (
      operation !== undefined && placeholdersOf(operation.request).some((p) => p.name === 'idempotencyKey')
    );
  }

  /** The id an update or delete targets: `recordId`, else `record.id` (updates only). */
  targetRecordId(input: WriteInput): string {
    const fromRecord = input.type === 'update' ? input.record?.id : undefined;
    const id =
      input.recordId ??
      (typeof fromRecord === 'string' || typeof fromRecord === 'number' ? String(fromRecord) : undefined);
    if (!id)
      throw new ConnectorInputError(
        `A ${input.type} of ${input.objectName} needs the record id.`,
        this.provider,
      );
    return id;
  }

  /** The field values of a create or update, without the id (which the URL addresses). */
  writeValues(input: WriteInput): Record<string, unknown> {
    if (!input.record || typeof input.record !== 'object') {
      throw new ConnectorInputError(`A ${input.type} of ${input.objectName} needs a record.`, this.provider);
    }
    const { id: _id, ...values } = input.record;
    return input.type === 'update' ? values : input.record;
  }

  async writeDeclared(input: WriteInput): Promise<WriteResult> {
    const capability = input.type === 'delete' ? 'delete' : 'write';
    if (!this.capabilities[capability]) throw this.unsupported(capability);
    const object = this.object(input.objectName);
    const operation = object.write?.[input.type];
    if (!operation) {
      throw this.unsupported(
        input.type === 'delete' ? 'delete' : 'write',
        `Ferry cannot ${input.type} ${input.objectName} records at "${this.provider}".`,
      );
    }
    if (
      input.associations?.length &&
      !placeholdersOf(operation.request).some((p) => p.name === 'associations')
    ) {
      throw this.unsupported(
        'associations',
        `"${this.provider}" takes no associations on a ${input.type} of ${input.objectName}; set the linking field instead.`,
      );
    }
    const id = input.type === 'create' ? undefined : this.targetRecordId(input);
    const values: TemplateValues = {
      ...this.templateValues(input.objectName, object),
      ...(id !== undefined && { id }),
      ...(input.idempotencyKey && { idempotencyKey: input.idempotencyKey }),
      ...(input.type !== 'delete' && { record: this.writeValues(input) }),
      ...(input.associations?.length && { associations: input.associations }),
    };
    // Setting the same values twice leaves the same record; a create is repeated only under an
    // idempotency key the provider honours (the request sends {{idempotencyKey}}), never blindly.
    const keyed =
      input.idempotencyKey !== undefined && this.honoursIdempotencyKey(input.objectName, input.type);
    const request = this.request(
      operation.request,
      values,
      input.type === 'create' && !keyed ? undefined : true,
    );
    const response = await this.send(input.objectName, request);
    const body = response.body;
    let recordId = id;
    if (input.type === 'create') {
      const fromBody = valueAt(body, operation.id ?? '/id');
      const fromHeader =
        operation.idHeader &&
        new RegExp(operation.idHeader.pattern).exec(
          response.headers[operation.idHeader.name.toLowerCase()] ?? '',
        )?.[1];
      const found = fromBody ?? fromHeader;
      if (found === undefined || found === null) {
        throw new ProviderError(
          this.provider,
          `Provider "${this.provider}" created the ${input.objectName} record but did not say its id.`,
          {
            retryable: false,
          },
        );
      }
      recordId = String(found);
    }
    const data = input.type === 'delete' ? undefined : valueAt(body, operation.record ?? '');
    const isRecord = data !== null && typeof data === 'object' && !Array.isArray(data);
    return { recordId: recordId!, ...(isRecord && { data: data as Record<string, unknown> }) };
  }

  async listObjectMetadata(objectName: string): Promise<ObjectMetadata> {
    const declared = () => this.declaredMetadata(objectName);
    return this.hooks.listObjectMetadata
      ? this.hooks.listObjectMetadata(this, objectName, declared)
      : declared();
  }

  async declaredMetadata(objectName: string): Promise<ObjectMetadata> {
    if (!this.capabilities.objectMetadata) throw this.unsupported('objectMetadata');
    const object = this.object(objectName);
    if (!object.metadata && !object.fields) {
      throw this.unsupported('objectMetadata', `Ferry cannot describe ${objectName} at "${this.provider}".`);
    }
    const fields: Record<string, FieldMetadata> = {};
    for (const [name, field] of Object.entries(object.fields ?? {})) fields[name] = staticField(name, field);
    const metadata = object.metadata;
    if (metadata) {
      const values = this.templateValues(objectName, object);
      let state: PageState | undefined = metadata.pagination ? firstPageState(metadata.pagination) : {};
      while (state) {
        const request = state.url
          ? {
              method: 'GET' as const,
              path: this.nextPageUrl(state.url, metadata.pagination),
              idempotent: true,
            }
          : this.request(metadata.request, { ...values, ...pageValues(state) }, true);
        const response = await this.send(objectName, request);
        const listed = valueAt(response.body, metadata.fields);
        const descriptors = Array.isArray(listed)
          ? listed
          : listed && typeof listed === 'object'
            ? Object.entries(listed).map(([key, value]) =>
                value && typeof value === 'object' ? { name: key, ...value } : value,
              )
            : [];
        for (const descriptor of descriptors) {
          if (metadata.where !== undefined && !holds(metadata.where, descriptor)) continue;
          const field = describedField(metadata, descriptor);
          if (field) fields[field.fieldName] = field;
        }
        state = metadata.pagination
          ? nextPageState(metadata.pagination, state, {
              body: response.body,
              headers: response.headers,
              items: descriptors,
              ids: [],
              pageSize: Number.MAX_SAFE_INTEGER,
            })
          : undefined;
      }
    }
    return { name: objectName, displayName: object.displayName ?? objectName, fields };
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
    return readWebhookEvents(this.provider, webhooks, body);
  }

  /** The provider request of a proxied one: a path under the base URL, no caller credentials. */
  private proxied(request: ProxyRequest): ProviderHttpRequest {
    if (!this.capabilities.proxy) throw this.unsupported('proxy');
    const method = request.method.toUpperCase();
    if (!proxyMethods.has(method)) throw this.unsupported('proxy', `Method ${method} cannot be proxied.`);
    if (
      /^[a-z][a-z0-9+.-]*:/i.test(request.path) ||
      request.path.startsWith('//') ||
      /(^|\/)\.\.(\/|\?|$)/.test(request.path)
    ) {
      // The path is appended to the provider's base URL; an absolute URL would send credentials elsewhere.
      throw this.unsupported('proxy', 'A proxied path must be relative to the provider’s base URL.');
    }
    const headers = Object.fromEntries(
      Object.entries(request.headers ?? {}).filter(([name]) => !unforwardedHeaders.has(name.toLowerCase())),
    );
    return {
      method: method as HttpMethod,
      path: `${request.path.startsWith('/') ? '' : '/'}${request.path}`,
      headers,
      body: request.body,
      // A proxied path may answer 401 for reasons of its own; only the connector's calls judge credentials.
      reportRejection: false,
      rawStatus: true,
    };
  }

  async proxy(request: ProxyRequest): Promise<ProxyResponse> {
    const response = await this.http.send(this.proxied(request));
    return { status: response.status, headers: response.headers, body: response.rawBody };
  }

  async proxyStream(request: ProxyRequest): Promise<ProxyStreamResponse> {
    return this.http.stream(this.proxied(request));
  }
}

/** A spread query member's value as a parameter: text as it is, anything else as JSON. */
function queryText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Whether a record's modification time falls in [since, until); records that do not say are kept. */
function withinWindow(record: ProviderRecord, since: Date | undefined, until: Date | undefined): boolean {
  if (!record.updatedAt || (!since && !until)) return true;
  const time = Date.parse(record.updatedAt);
  return (!since || time >= since.getTime()) && (!until || time < until.getTime());
}

/**
 * A page's records as a read returns them. A feed of changes lists a record once per change: the
 * page keeps its first, the newest in a feed listed newest first (Stripe's events). Deletions a
 * listing marks itself are kept only when the read asks for them.
 */
function listedRecords(
  records: ProviderRecord[],
  listing: Listing,
  includeDeleted: boolean,
): ProviderRecord[] {
  const seen = new Set<string>();
  const latest =
    listing.record === undefined
      ? records
      : records.filter((record) => !seen.has(record.id) && seen.add(record.id));
  return listing.deleted === undefined || includeDeleted
    ? latest
    : latest.filter((record) => !record.deleted);
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
