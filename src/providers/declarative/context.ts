import type {
  ProviderRecord,
  ReadPageInput,
  ReadPageResult,
  SearchInput,
  SearchPageResult,
  WriteInput,
  WriteResult,
} from '../connector.js';
import type { CapabilityNotSupportedError } from '../errors.js';
import type { ProviderHttpClient, ProviderHttpRequest, ProviderHttpResponse } from '../http.js';
import type { Capability, ConnectorCapabilities } from '../../schemas/capabilities.js';
import type {
  DeclaredRequest,
  Listing,
  ObjectDeclaration,
  Pagination,
} from '../../schemas/connector-declaration.js';
import type { ObjectMetadata } from '../../schemas/object-metadata.js';
import type { TemplateValues } from './template.js';

/**
 * What the declarative connector's capabilities (read.ts, search.ts, write.ts, metadata.ts,
 * proxy.ts, webhooks.ts) need of it: its declaration, its requests and its HTTP client. They depend
 * on this rather than on the class, which composes them.
 */
export interface DeclaredContext {
  readonly provider: string;
  readonly capabilities: Readonly<ConnectorCapabilities>;
  readonly http: ProviderHttpClient;
  /** The connection this connector serves, when it is a stored one. */
  readonly connectionId: string | undefined;
  unsupported(capability: Capability | string, detail?: string): CapabilityNotSupportedError;
  /** An object's declaration (defaults merged); a 404 ProviderError for an object the provider lacks. */
  object(objectName: string): ObjectDeclaration;
  /** Sends a request and returns the 2xx answer (the provider's failures said as its hooks say). */
  send(objectName: string, request: ProviderHttpRequest): Promise<ProviderHttpResponse>;
  /** A declared request with its templates filled in. */
  request(declared: DeclaredRequest, values: TemplateValues, idempotent?: boolean): ProviderHttpRequest;
  templateValues(objectName: string, object: ObjectDeclaration): TemplateValues;
  /** The window's clauses for the times in `values`, joined as declared. */
  window(declared: { window?: Listing['window'] }, values: TemplateValues): unknown;
  /** A provider's next-page URL, only ever on its own origin. */
  nextPageUrl(url: string, pagination?: Pagination): string;
  /** A listed item as a record: id, modification time, deletion mark, values by metadata name. */
  record(
    object: ObjectDeclaration,
    item: unknown,
    listing?: Pick<Listing, 'record' | 'updated' | 'deleted'>,
  ): ProviderRecord;
}

/**
 * What a provider's hooks (`src/providers/connectors/<provider>.ts`) receive: the context above,
 * and the declared behaviour of each capability, to wrap or fall back on.
 */
export interface HookContext extends DeclaredContext {
  readDeclaredPage(input: ReadPageInput, parent?: string): Promise<ReadPageResult>;
  searchDeclared(input: SearchInput): Promise<SearchPageResult>;
  writeDeclared(input: WriteInput): Promise<WriteResult>;
  /** The field values of a create or update, without the id, folded into their containers. */
  writeValues(input: WriteInput): Record<string, unknown>;
  /** The id an update or delete targets: `recordId`, else `record.id` (updates only). */
  targetRecordId(input: WriteInput): string;
  declaredMetadata(objectName: string): Promise<ObjectMetadata>;
  honoursIdempotencyKey(objectName: string, type: WriteInput['type']): boolean;
}
