import { randomBytes } from 'node:crypto';
import type { RecordChangeType } from '../../schemas/write.js';
import type {
  DeclaredRequest,
  WebhookEvent,
  WebhookValue,
  WebhooksDeclaration,
} from '../../schemas/connector-declaration.js';
import type { IncomingProviderEvent, SubscribeInput, Subscription } from '../connector.js';
import { ProviderError, WebhookVerificationError } from '../errors.js';
import type { ProviderHttpClient, ProviderHttpRequest } from '../http.js';
import type { CapabilityNotSupportedError } from '../errors.js';
import { valueAt } from './json-pointer.js';
import { headerValue, type Headers } from './webhook-signatures.js';
import type { TemplateValues } from './template.js';
import { isoTime } from './times.js';

/**
 * A declaration's `webhooks`: subscriptions registered with declared requests, signatures checked
 * as an HMAC-SHA256 the declaration describes, and events read with pointers. Most providers sign
 * the same way with different names (Stripe, Close, Zendesk, Linear, Attio), so this is data.
 */

export { checkSignature, type WebhookRequest } from './webhook-signatures.js';

/** What registering needs of the connector. */
export interface WebhookConnector {
  readonly provider: string;
  readonly http: ProviderHttpClient;
  unsupported(capability: string, detail?: string): CapabilityNotSupportedError;
  send(objectName: string, request: ProviderHttpRequest): Promise<{ body: unknown }>;
  request(declared: DeclaredRequest, values: TemplateValues, idempotent?: boolean): ProviderHttpRequest;
}

const changes: RecordChangeType[] = ['create', 'update', 'delete'];

const eventName = (event: WebhookEvent) => (typeof event === 'string' ? event : event.name);
const registered = (event: WebhookEvent) => (typeof event === 'string' ? event : event.register);
/** A change's declared events: one, or several (GitHub's `issues.closed` and `issues.edited`). */
const eventsOf = (declared: WebhookEvent | WebhookEvent[] | undefined): WebhookEvent[] =>
  declared === undefined ? [] : Array.isArray(declared) ? declared : [declared];

/** What registering for the input's changes sends as `{{events}}`: each value once, in order. */
export function registeredEvents(webhooks: WebhooksDeclaration, input: SubscribeInput): unknown[] {
  const object = webhooks.objects[input.objectName];
  if (!object) return [];
  const seen = new Set<string>();
  const events: unknown[] = [];
  for (const change of input.events) {
    for (const event of eventsOf(object[change])) {
      const value = registered(event);
      const key = JSON.stringify(value);
      if (!seen.has(key)) events.push(value);
      seen.add(key);
    }
  }
  return events;
}

async function answer(
  connector: WebhookConnector,
  objectName: string,
  request: Parameters<WebhookConnector['request']>[0],
  values: TemplateValues,
) {
  return (await connector.send(objectName, connector.request(request, values))).body;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' || typeof value === 'number' ? String(value) : undefined;
}

/** Registers (or, with `subscriptionId`, changes) the provider's subscription for one object. */
export async function registerWebhook(
  connector: WebhookConnector,
  webhooks: WebhooksDeclaration,
  input: SubscribeInput,
  base: TemplateValues,
  subscriptionId?: string,
  now = Date.now(),
): Promise<Subscription> {
  if (!webhooks.objects[input.objectName]) {
    throw connector.unsupported('subscribe', `The provider sends no change events of ${input.objectName}.`);
  }
  // The app's settings at the provider hold the subscription: there is nothing to register.
  if (!webhooks.create) return { subscriptionId: `app:${input.objectName}` };
  const { create } = webhooks;
  const secret = webhooks.ferrySecret ? randomBytes(32).toString('base64url') : undefined;
  const values: TemplateValues = {
    ...base,
    webhookUrl: input.webhookUrl,
    events: registeredEvents(webhooks, input),
    ...(secret && { secret }),
  };
  const expiresAt = expiryOf(webhooks, now);
  if (expiresAt) values.expiresAt = expiresAt;
  if (subscriptionId && webhooks.update && !create.perEvent) {
    const changed = await answer(connector, input.objectName, webhooks.update.request, {
      ...values,
      subscriptionId,
    });
    return { subscriptionId, ...(secret && { secret }), ...expiryIn(webhooks, changed, expiresAt) };
  }
  if (subscriptionId) await unregisterWebhook(connector, webhooks, subscriptionId, base);
  if (create.perEvent) {
    const made = await registerPerEvent(connector, webhooks, create, input, values, secret);
    return { ...made, ...(expiresAt && { expiresAt }) };
  }
  const made = await answer(connector, input.objectName, create.request, values);
  const id = text(valueAt(made, create.id));
  if (!id) throw withoutId(connector);
  const expiry = expiryIn(webhooks, made, expiresAt);
  let issued = create.secret ? text(valueAt(made, create.secret)) : secret;
  if (webhooks.secret) {
    const body = await answer(connector, input.objectName, webhooks.secret.request, {
      ...values,
      subscriptionId: id,
    });
    issued = text(valueAt(body, webhooks.secret.value));
  }
  return { subscriptionId: id, ...(issued && { secret: issued }), ...expiry };
}

/** The expiry Ferry asks for: now plus the declared lifetime; undefined when subscriptions do not expire. */
function expiryOf(webhooks: WebhooksDeclaration, now: number): string | undefined {
  return webhooks.renewal && new Date(now + webhooks.renewal.lifetimeSeconds * 1000).toISOString();
}

/** The expiry the provider answered (where the declaration says it does), else the one asked for. */
function expiryIn(
  webhooks: WebhooksDeclaration,
  answered: unknown,
  asked: string | undefined,
): { expiresAt?: string } {
  const pointer = webhooks.renewal?.expiresAt;
  const given = pointer === undefined ? undefined : text(valueAt(answered, pointer));
  const time = given === undefined ? Number.NaN : Date.parse(given);
  const expiresAt = Number.isNaN(time) ? asked : new Date(time).toISOString();
  return expiresAt ? { expiresAt } : {};
}

/**
 * Extends a subscription before it expires (Graph's PATCH of `expirationDateTime`, Jira's refresh):
 * its new expiry, the earliest of its parts' for one kept per event; undefined when nothing expires.
 */
export async function renewWebhook(
  connector: WebhookConnector,
  webhooks: WebhooksDeclaration,
  subscriptionId: string,
  base: TemplateValues,
  now = Date.now(),
): Promise<string | undefined> {
  const { renewal } = webhooks;
  if (!renewal) return undefined;
  const asked = expiryOf(webhooks, now);
  const ids = webhooks.create?.perEvent ? subscriptionId.split(',') : [subscriptionId];
  const expiries: string[] = [];
  for (const id of ids) {
    const request = connector.request(
      renewal.request,
      { ...base, subscriptionId: id, expiresAt: asked },
      true,
    );
    const response = await connector.http.send(request);
    if (response.status >= 300) throw connector.http.errorFor(request, response);
    const { expiresAt } = expiryIn(webhooks, response.body, asked);
    if (expiresAt) expiries.push(expiresAt);
  }
  return expiries.sort()[0];
}

const withoutId = (connector: WebhookConnector) =>
  new ProviderError(connector.provider, 'The provider answered a new subscription without its id.', {
    retryable: false,
  });

/**
 * One provider subscription per event, sharing Ferry's secret; their ids joined with commas. A
 * failure part way removes those already made, so nothing is left registered that Ferry forgets.
 */
async function registerPerEvent(
  connector: WebhookConnector,
  webhooks: WebhooksDeclaration,
  create: NonNullable<WebhooksDeclaration['create']>,
  input: SubscribeInput,
  values: TemplateValues,
  secret: string | undefined,
): Promise<Subscription> {
  const ids: string[] = [];
  try {
    for (const event of values.events as unknown[]) {
      const made = await answer(connector, input.objectName, create.request, { ...values, event });
      const id = text(valueAt(made, create.id));
      if (!id) throw withoutId(connector);
      ids.push(id);
    }
  } catch (error) {
    if (ids.length) {
      await unregisterWebhook(connector, webhooks, ids.join(','), values).catch(() => undefined);
    }
    throw error;
  }
  if (!ids.length) throw connector.unsupported('subscribe', `No change events of ${input.objectName} asked.`);
  return { subscriptionId: ids.join(','), ...(secret && { secret }) };
}

export async function unregisterWebhook(
  connector: WebhookConnector,
  webhooks: WebhooksDeclaration,
  subscriptionId: string,
  base: TemplateValues,
): Promise<void> {
  if (!webhooks.delete) return; // the app's own subscription: nothing was registered
  const ids = webhooks.create?.perEvent ? subscriptionId.split(',') : [subscriptionId];
  for (const id of ids) {
    const request = connector.request(webhooks.delete.request, { ...base, subscriptionId: id }, true);
    const response = await connector.http.send(request);
    if (response.status === 404) continue; // already gone: the goal is reached
    if (response.status >= 300) throw connector.http.errorFor(request, response);
  }
}

function fieldsUpdated(webhooks: WebhooksDeclaration, event: unknown): string[] | undefined {
  const declared = webhooks.event.fieldsUpdated;
  if (!declared) return undefined;
  const value = valueAt(event, declared.pointer);
  if (declared.as === 'list' && Array.isArray(value)) {
    const names = declared.each
      ? value.map((item) => text(valueAt(item, declared.each!)))
      : value.map(String);
    return [...new Set(names.filter((name): name is string => name !== undefined))];
  }
  if (declared.as === 'list') return undefined;
  if (declared.as === 'name') return typeof value === 'string' && value ? [value] : undefined;
  return value && typeof value === 'object' && !Array.isArray(value) ? Object.keys(value) : undefined;
}

/** The value at the first of the pointers that has one. */
function firstAt(event: unknown, pointers: string | string[] | undefined): unknown {
  for (const pointer of pointers === undefined ? [] : Array.isArray(pointers) ? pointers : [pointers]) {
    const value = valueAt(event, pointer);
    if (value !== undefined && value !== null) return value;
  }
  return undefined;
}

/** A declared value of a delivery: a member of the event, or a request header. */
const valueOf = (declared: WebhookValue, event: unknown, headers: Headers) =>
  typeof declared === 'string' ? text(valueAt(event, declared)) : headerValue(headers, declared.header);

function eventIdOf(webhooks: WebhooksDeclaration, event: unknown, headers: Headers): string | undefined {
  const declared = webhooks.event.id;
  if (!declared) return undefined;
  const parts = (Array.isArray(declared) ? declared : [declared]).map((value) =>
    valueOf(value, event, headers),
  );
  return parts.every((part) => part !== undefined) ? parts.join(':') : undefined;
}

/**
 * The objects an app-level event may concern: the one whose declared event it is, else those whose
 * declared events share its first dotted part (`contact.merge` → the object of `contact.creation`).
 */
export function objectsOfEvent(webhooks: WebhooksDeclaration, event: IncomingProviderEvent): string[] {
  if (event.objectName) return [event.objectName];
  const prefix = `${event.providerEventType.split('.')[0]}.`;
  return Object.entries(webhooks.objects)
    .filter(([, object]) =>
      changes.some((change) =>
        eventsOf(object[change]).some((declared) => eventName(declared).startsWith(prefix)),
      ),
    )
    .map(([name]) => name);
}

/** The declared notices of a verified body that ask for a renewal now (Graph's lifecycle events). */
export function renewalNotices(webhooks: WebhooksDeclaration, rawBody: Buffer): string[] {
  const { notice, renewOn, list } = webhooks.event;
  if (notice === undefined || !renewOn) return [];
  let body: unknown;
  try {
    body = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return [];
  }
  const items = list !== undefined ? valueAt(body, list) : [body];
  if (!Array.isArray(items)) return [];
  return items
    .map((item) => text(valueAt(item, notice)))
    .filter((value): value is string => value !== undefined && renewOn.includes(value));
}

/** The events of a verified body in Ferry's terms; objects and changes by the declared event names. */
export function readWebhookEvents(
  provider: string,
  webhooks: WebhooksDeclaration,
  rawBody: Buffer,
  headers: Headers = {},
  subscribedObject?: string,
): IncomingProviderEvent[] {
  let body: unknown;
  try {
    body = JSON.parse(rawBody.toString('utf8'));
  } catch {
    throw new WebhookVerificationError('The webhook body is not JSON.', provider);
  }
  // `list: ""` is a body that is itself the list (HubSpot).
  const items = webhooks.event.list !== undefined ? valueAt(body, webhooks.event.list) : [body];
  if (!Array.isArray(items)) throw new WebhookVerificationError('The webhook lists no events.', provider);
  const byName = new Map<string, { objectName: string; change: RecordChangeType }>();
  // Events that name the change but not the object (Graph's `changeType`) are the subscription's
  // object's: its names are set last, so they win.
  const objects = Object.entries(webhooks.objects).sort(
    ([a], [b]) => Number(a === subscribedObject) - Number(b === subscribedObject),
  );
  for (const [objectName, object] of objects) {
    for (const change of changes) {
      for (const event of eventsOf(object[change])) byName.set(eventName(event), { objectName, change });
    }
  }
  const { notice } = webhooks.event;
  const recordChanges =
    notice === undefined ? items : items.filter((item) => valueAt(item, notice) === undefined);
  return recordChanges.flatMap((item) => {
    const event = webhooks.event.root ? valueAt(item, webhooks.event.root) : item;
    const type = webhooks.event.type.map((value) => valueOf(value, event, headers) ?? '').join('.');
    const known = byName.get(type);
    const record = firstAt(event, webhooks.event.record);
    const occurred = webhooks.event.occurredAt;
    const occurredAt = occurred && isoTime(valueAt(event, occurred.field), occurred.format);
    const id = eventIdOf(webhooks, event, headers);
    const workspace = webhooks.event.workspace && text(valueAt(event, webhooks.event.workspace));
    const updated = fieldsUpdated(webhooks, event);
    const translated = (recordId: string, eventId: string | undefined): IncomingProviderEvent => ({
      ...(eventId && { eventId }),
      eventType: known?.change ?? 'other',
      providerEventType: type,
      objectName: known?.objectName ?? '',
      recordId,
      ...(record && typeof record === 'object' && !Array.isArray(record) && known?.change !== 'delete'
        ? { record: record as Record<string, unknown> }
        : {}),
      ...(updated && { fieldsUpdated: updated }),
      ...(occurredAt && { occurredAt }),
      ...(workspace && { workspaceRef: workspace }),
      rawEvent: (item ?? {}) as Record<string, unknown>,
    });
    if (!webhooks.event.recordIds) {
      const recordId = text(firstAt(event, webhooks.event.recordId)) ?? '';
      const prefix = known && webhooks.objects[known.objectName].recordIdPrefix;
      return [
        translated(prefix && recordId && !recordId.startsWith(prefix) ? prefix + recordId : recordId, id),
      ];
    }
    // One notification naming several records (Copper's `ids`): an event per record.
    const ids = valueAt(event, webhooks.event.recordIds);
    if (!Array.isArray(ids)) throw new WebhookVerificationError('The webhook lists no record ids.', provider);
    return ids
      .map((value) => text(value))
      .filter((value): value is string => value !== undefined)
      .map((recordId) => translated(recordId, id && `${id}:${recordId}`));
  });
}
