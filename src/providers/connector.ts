/**
 * The one interface Ferry's runtime speaks to SaaS providers through.
 *
 * A connector serves one connection (one customer's account at one provider). Get one with
 * `connectorFor(target)`: providers with a deep connector (`src/providers/connectors/`) get it;
 * every other catalog provider gets a `GenericConnector`, which can only proxy authenticated
 * requests and throws `CapabilityNotSupportedError` from every record method.
 *
 * Rules every connector keeps, so callers can rely on them:
 * - Every provider request goes through the shared HTTP layer (`src/providers/http.ts`): auth
 *   injection, retries of 429/5xx with backoff, one forced credential refresh after a 401,
 *   timeouts, and a `RequestLogEntry` per attempt to `options.onRequest` (never with secrets).
 * - Failures are typed (`src/providers/errors.ts`): `CapabilityNotSupportedError` when the
 *   provider cannot do what was asked, `ProviderError` when the provider (or the network) failed,
 *   with `retryable` saying whether trying again later may succeed, `WebhookVerificationError`
 *   for a webhook whose signature does not check out. `toProblem()` in errors.ts maps them to API
 *   problems (422 unsupported, 404 unknown object, 502 provider failure with `retryable`).
 * - Page tokens are opaque strings: store them and pass them back unchanged; they carry the query
 *   they continue (object, window, fields), so resuming after a crash needs only the token.
 * - Records are returned exactly as the provider sent them (`raw`); field selection, mapping and
 *   lower-casing are the read pipeline's business.
 */
import type { Readable } from 'node:stream';
import type { RequestLogEntry, RetryPolicy } from './http.js';
import type { ConnectorCapabilities } from '../schemas/capabilities.js';
import type {
  CustomFieldDefinition,
  ObjectMetadata,
  UpsertCustomFieldsResult,
} from '../schemas/object-metadata.js';
import type { RecordChangeType } from '../schemas/write.js';

export type { ConnectionTarget } from './auth-material.js';
export type { RequestLogEntry } from './http.js';

export interface ReadPageInput {
  /** The provider's object name (`contacts`), never a mapped name. */
  objectName: string;
  /** Provider field names to fetch; all (or the provider's defaults) when absent. */
  fields?: string[];
  /** Only records modified at or after this instant (inclusive). Absent: from the beginning. */
  since?: Date;
  /** Only records modified before this instant (exclusive). Absent: up to now. */
  until?: Date;
  /** `nextPageToken` of the previous page; absent for the first page. */
  pageToken?: string;
  /** Records per provider page; absent: the most the provider allows. Never more than asked. */
  pageSize?: number;
  /**
   * Also return deletions as records with `deleted: true`, where the provider reveals them (see
   * `ChangeTracking.deletions`); a separate listing of deletions is read after the changes.
   */
  includeDeleted?: boolean;
  /** Deletions at or after this instant; absent: `since`. */
  deletedSince?: Date;
  /**
   * Start where an earlier read left off: its last page's `resumeCursor`, for listings that resume
   * from the provider's own cursor. `since` then only says where to start should the provider no
   * longer take the cursor.
   */
  resumeFrom?: string;
}

export interface ProviderRecord {
  /** The provider's record id. */
  id: string;
  /** When the provider last modified the record (ISO 8601), when it says. */
  updatedAt?: string;
  /** The record exactly as the provider sent it. */
  raw: Record<string, unknown>;
  /** Set on deletions listed because `includeDeleted` was asked for. */
  deleted?: boolean;
  /**
   * The record's field values under the names its metadata lists, where they differ from `raw`'s
   * top-level keys (values kept in containers: HubSpot's `properties`, custom field lists); field
   * selection and mapping read this, `raw` stays as the provider sent it.
   */
  values?: Record<string, unknown>;
}

export interface ReadPageResult {
  records: ProviderRecord[];
  /** Pass back as `pageToken` to get the next page; absent when `done`. */
  nextPageToken?: string;
  /** True when no page follows. A page may be empty and still not be the last. */
  done: boolean;
  /** The page comes from the listing of deletions: its records' times are deletion times. */
  deletions?: boolean;
  /**
   * On the last page of a listing that resumes from the provider's own cursor: pass it back as
   * `resumeFrom` to read what changed since.
   */
  resumeCursor?: string;
}

/**
 * How an object's changes are followed from one read to the next: what a scheduled read needs to
 * lose nothing at the window's edges and to deliver deletions.
 */
export interface ChangeTracking {
  /**
   * How far before the newest modification time seen the next read must start: the provider's lag
   * (an index that catches up, an export's cut-off, late commits) plus one unit of its precision.
   * What the overlap shows again is recognised by id and time and not delivered twice.
   */
  overlapMs: number;
  /** How deleted records are revealed: in the listing itself, in a listing of their own, or not. */
  deletions: 'marked' | 'listing' | 'none';
  /** The overlap of the listing of deletions (`deletions: listing`). */
  deletionsOverlapMs: number;
  /** The listing resumes from the provider's own cursor (`resumeCursor`). */
  resumable: boolean;
  /** The unit of the provider's modification times (ms): 1000 for whole seconds. */
  precisionMs: number;
  /** The unit of the times in the listing of deletions (ms). */
  deletionsPrecisionMs: number;
  /**
   * Every read walks the whole listing (`read.fullRead`): changes are found by comparing records with
   * their fingerprints, and deletions inferred from complete walks.
   */
  fullRead?: boolean;
}

export interface WriteInput {
  /** The provider's object name. */
  objectName: string;
  type: RecordChangeType;
  /** Required for update and delete (falls back to `record.id` for update). */
  recordId?: string;
  /** Field values for create and update, in the provider's field names. */
  record?: Record<string, unknown>;
  /** Provider-specific associations to create with the record (HubSpot's `associations` array). */
  associations?: unknown[];
  /** Unique to this record of this write operation: a provider that dedupes retries (Stripe) gets it as `{{idempotencyKey}}`. */
  idempotencyKey?: string;
}

export interface WriteResult {
  recordId: string;
  /** The record as the provider returned it after the write; absent for deletes. */
  data?: Record<string, unknown>;
}

export interface SubscribeInput {
  /** The provider's object name. */
  objectName: string;
  events: RecordChangeType[];
  /** Where the provider should POST events (Ferry's public webhook URL for this subscription). */
  webhookUrl: string;
}

export interface Subscription {
  /** The provider's id of the subscription; keep it to update or delete it. */
  subscriptionId: string;
  /** Signing secret the provider issued, when it issues one; pass it to `verifyWebhook`. Store encrypted. */
  secret?: string;
  /** When the provider ends the subscription unless it is renewed (`renewSubscription`), ISO 8601. */
  expiresAt?: string;
}

/** One record change a provider told Ferry about, in Ferry's terms plus the original event. */
export interface IncomingProviderEvent {
  /** The provider's event id, for de-duplication of redeliveries. */
  eventId?: string;
  eventType: RecordChangeType | 'other';
  /** The provider's own name of the event (`contacts.updated`). */
  providerEventType: string;
  objectName: string;
  recordId: string;
  /** The record after the change (absent for deletes, or when the provider sends only ids). */
  record?: Record<string, unknown>;
  /** Fields whose value changed, for updates, when the provider says. */
  fieldsUpdated?: string[];
  occurredAt?: string;
  /** The provider account the event belongs to, for app-level webhooks (HubSpot's `portalId`). */
  workspaceRef?: string;
  /** The event exactly as received. */
  rawEvent: Record<string, unknown>;
}

/** Records whose fields equal the values given (every filter holds), one page at a time. */
export interface SearchInput {
  /** The provider's object name. */
  objectName: string;
  /** Provider field names and the values they must equal; ignored when `pageToken` is given. */
  filters: { fieldName: string; value: unknown }[];
  /** Provider field names to fetch; all (or the provider's defaults) when absent. */
  fields?: string[];
  pageSize: number;
  /** `nextPageToken` of the previous page; it carries the query it continues. */
  pageToken?: string;
}

export interface SearchPageResult {
  records: ProviderRecord[];
  /** Absent on the last page. */
  nextPageToken?: string;
}

export interface CountInput {
  objectName: string;
  since?: Date;
  until?: Date;
}

/** A request to send to the provider as-is, authenticated (the proxy feature). */
export interface ProxyRequest {
  method: string;
  /** Path relative to the provider's base URL (`/crm/v3/objects/contacts`), with its query string. */
  path: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
}

export interface ProxyStreamResponse {
  status: number;
  headers: Record<string, string>;
  body: Readable;
}

export interface ProxyResponse {
  status: number;
  headers: Record<string, string>;
  body: Uint8Array;
}

export interface Connector {
  /** The catalog name of the provider this connector talks to. */
  readonly provider: string;
  readonly capabilities: Readonly<ConnectorCapabilities>;

  /** One page of records modified in [since, until), oldest first where the provider can sort. */
  readPage(input: ReadPageInput): Promise<ReadPageResult>;

  /** How reads of an object follow its changes; throws as `readPage` would for an object it cannot read. */
  changeTracking(objectName: string): ChangeTracking;

  /** One page of records matching equality filters, where the provider declares a search. */
  search(input: SearchInput): Promise<SearchPageResult>;

  /** One record by id, as the provider has it now; undefined when it has none by that id. */
  readRecord(objectName: string, recordId: string): Promise<ProviderRecord | undefined>;

  /** Creates, updates or deletes one record. */
  write(input: WriteInput): Promise<WriteResult>;

  /**
   * Whether this write sends `idempotencyKey` to a provider that honours it, so sending it again under
   * the same key applies it once (Stripe's `Idempotency-Key`).
   */
  honoursIdempotencyKey(objectName: string, type: WriteInput['type']): boolean;

  /**
   * Describes an object's fields. Throws `ProviderError` with status 404 (`isNotFound`) when the
   * provider has no such object.
   */
  listObjectMetadata(objectName: string): Promise<ObjectMetadata>;

  /** Creates each custom field, or updates it when it exists. Definitions are already validated. */
  upsertCustomFields(objectName: string, fields: CustomFieldDefinition[]): Promise<UpsertCustomFieldsResult>;

  /** Asks the provider to send record changes of one object to `webhookUrl`. */
  subscribe(input: SubscribeInput): Promise<Subscription>;
  /** Changes an existing subscription's events or URL. */
  updateSubscription(subscriptionId: string, input: SubscribeInput): Promise<Subscription>;
  /** Removes a subscription; an already missing one counts as removed. */
  deleteSubscription(subscriptionId: string): Promise<void>;
  /**
   * Extends a subscription that expires (Microsoft Graph's, Jira's dynamic webhooks); answers its new
   * expiry, ISO 8601, or undefined when the provider's subscriptions do not expire.
   */
  renewSubscription(subscriptionId: string): Promise<string | undefined>;

  /**
   * Checks a webhook delivery against the subscription's secret and translates it.
   * Throws `WebhookVerificationError` when the signature is missing, wrong or too old.
   * Synchronous and free of I/O, so a webhook endpoint can answer at once.
   */
  verifyWebhook(
    headers: Record<string, string | string[] | undefined>,
    rawBody: string | Buffer,
    secret: string,
    /**
     * The method and URL it came in, for signatures over them (HubSpot's v3), and the subscription's
     * object, for events that name only the change (Graph's `changeType`).
     */
    request?: { method: string; uri: string; objectName?: string },
  ): IncomingProviderEvent[];

  /** How many records a read of [since, until) would return; undefined when the provider cannot say. */
  estimateCount(input: CountInput): Promise<number | undefined>;

  /** Sends one request with the connection's credentials (same retries, refresh and logging). */
  proxy(request: ProxyRequest): Promise<ProxyResponse>;
  /** As `proxy`, with the answer's body streamed rather than held (the proxy listener uses it). */
  proxyStream?(request: ProxyRequest): Promise<ProxyStreamResponse>;
}

export interface ConnectorOptions {
  /** Called once per HTTP attempt, with secrets already removed; for operation logs (`details.request`). */
  onRequest?: (entry: RequestLogEntry) => void;
  /** Replaces the catalog's base URL (tests point a connector at a local fake provider). */
  baseUrl?: string;
  /** Retry and timeout settings of the HTTP layer; tests shorten the delays. */
  retry?: RetryPolicy;
  /** Per-attempt timeout in milliseconds (default 30 s). */
  timeoutMs?: number;
}
