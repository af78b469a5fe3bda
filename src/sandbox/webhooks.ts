import { randomBytes } from 'node:crypto';
import { validationError, type FieldProblem } from './errors.js';
import type { SandboxStats } from './faults.js';
import type { SandboxRecord } from './data.js';
import { objectNames, type ObjectName } from './schema.js';
import { sandboxSignatureHeader, signSandboxPayload } from './signature.js';

export type RecordAction = 'created' | 'updated' | 'deleted';

export interface WebhookSubscription {
  id: string;
  url: string;
  /** e.g. "contacts.created"; "contacts.*" and "*" match more. */
  events: string[];
  secret: string;
  active: boolean;
  createdAt: string;
}

export interface WebhookEvent {
  id: string;
  type: string;
  occurredAt: string;
  object: ObjectName;
  recordId: string;
  record?: SandboxRecord;
  changedFields?: string[];
}

const eventPattern = new RegExp(`^(\\*|(${objectNames.join('|')})\\.(\\*|created|updated|deleted))$`);
const deliveryTimeoutMs = 5_000;

function randomId(prefix: string, bytes: number): string {
  return `${prefix}${randomBytes(bytes).toString('base64url')}`;
}

function isHttpUrl(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  try {
    return ['http:', 'https:'].includes(new URL(value).protocol);
  } catch {
    return false;
  }
}

function matches(subscription: WebhookSubscription, type: string): boolean {
  const [object] = type.split('.');
  return subscription.events.some(
    (pattern) => pattern === '*' || pattern === type || pattern === `${object}.*`,
  );
}

/**
 * Webhook subscriptions and their deliveries: fire-and-forget POSTs signed with the subscription's
 * secret, retried a couple of times on failure. close() abandons whatever is still pending.
 */
export class WebhookDispatcher {
  private subscriptions = new Map<string, WebhookSubscription>();
  private inFlight = new Set<AbortController>();
  private retryTimers = new Set<NodeJS.Timeout>();
  private closed = false;

  constructor(
    private readonly stats: SandboxStats,
    private readonly retryDelaysMs: number[],
  ) {}

  list(): WebhookSubscription[] {
    return [...this.subscriptions.values()];
  }

  get(id: string): WebhookSubscription | undefined {
    return this.subscriptions.get(id);
  }

  create(body: unknown): WebhookSubscription {
    const input = this.validate(body, true);
    const subscription: WebhookSubscription = {
      id: randomId('wh_', 12),
      url: input.url!,
      events: input.events!,
      secret: randomId('whsec_', 24),
      active: input.active ?? true,
      createdAt: new Date().toISOString(),
    };
    this.subscriptions.set(subscription.id, subscription);
    return subscription;
  }

  update(id: string, body: unknown): WebhookSubscription | undefined {
    const subscription = this.subscriptions.get(id);
    if (!subscription) return undefined;
    const input = this.validate(body, false);
    Object.assign(subscription, input);
    return subscription;
  }

  delete(id: string): boolean {
    return this.subscriptions.delete(id);
  }

  reset(): void {
    this.subscriptions.clear();
  }

  /** Queues delivery of one record change to every matching active subscription; never throws. */
  emit(
    object: ObjectName,
    action: RecordAction,
    recordId: string,
    record?: SandboxRecord,
    changedFields?: string[],
  ): void {
    if (this.closed) return;
    const type = `${object}.${action}`;
    const event: WebhookEvent = {
      id: randomId('evt_', 12),
      type,
      occurredAt: new Date().toISOString(),
      object,
      recordId,
    };
    if (record && action !== 'deleted') event.record = record;
    if (action === 'updated') event.changedFields = changedFields ?? [];
    const rawBody = JSON.stringify(event);
    for (const subscription of this.subscriptions.values()) {
      if (subscription.active && matches(subscription, type)) {
        void this.deliver(subscription, event, rawBody, 1);
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of this.retryTimers) clearTimeout(timer);
    this.retryTimers.clear();
    for (const controller of this.inFlight) controller.abort();
  }

  private async deliver(
    subscription: WebhookSubscription,
    event: WebhookEvent,
    rawBody: string,
    attempt: number,
  ) {
    const controller = new AbortController();
    const timeout = setTimeout(() => controller.abort(), deliveryTimeoutMs);
    this.inFlight.add(controller);
    let delivered = false;
    try {
      const response = await fetch(subscription.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'User-Agent': 'SandboxCRM-Webhooks/1.0',
          [sandboxSignatureHeader]: signSandboxPayload(subscription.secret, rawBody),
          'X-Sandbox-Event-Id': event.id,
          'X-Sandbox-Event-Type': event.type,
          'X-Sandbox-Delivery-Attempt': String(attempt),
        },
        body: rawBody,
        signal: controller.signal,
      });
      await response.arrayBuffer().catch(() => undefined); // drain, so the connection can be reused
      delivered = response.ok;
    } catch {
      delivered = false; // unreachable, timed out or aborted by close()
    } finally {
      clearTimeout(timeout);
      this.inFlight.delete(controller);
    }
    if (delivered) {
      this.stats.webhooksDelivered++;
      return;
    }
    const delay = this.retryDelaysMs[attempt - 1];
    if (this.closed || delay === undefined) {
      this.stats.webhookDeliveryFailures++;
      return;
    }
    const timer = setTimeout(() => {
      this.retryTimers.delete(timer);
      // The subscription may have been deleted or paused meanwhile.
      const current = this.subscriptions.get(subscription.id);
      if (current?.active) void this.deliver(current, event, rawBody, attempt + 1);
    }, delay);
    this.retryTimers.add(timer);
  }

  private validate(
    body: unknown,
    creating: boolean,
  ): Partial<Pick<WebhookSubscription, 'url' | 'events' | 'active'>> {
    if (!body || typeof body !== 'object' || Array.isArray(body)) {
      throw validationError('The body must be a JSON object.');
    }
    const { url, events, active, ...rest } = body as Record<string, unknown>;
    const problems: FieldProblem[] = Object.keys(rest).map((name) => ({
      name,
      message: 'Unknown property.',
    }));
    if ((creating || url !== undefined) && !isHttpUrl(url)) {
      problems.push({ name: 'url', message: 'An absolute http(s) URL.' });
    }
    const validEvents =
      Array.isArray(events) &&
      events.length > 0 &&
      events.every((e) => typeof e === 'string' && eventPattern.test(e));
    if ((creating || events !== undefined) && !validEvents) {
      problems.push({
        name: 'events',
        message:
          'A non-empty list like "contacts.created", "deals.*" or "*" (objects: contacts, companies, deals).',
      });
    }
    if (active !== undefined && typeof active !== 'boolean') {
      problems.push({ name: 'active', message: 'true or false.' });
    }
    if (problems.length) throw validationError('The webhook subscription is invalid.', problems);
    const input: Partial<Pick<WebhookSubscription, 'url' | 'events' | 'active'>> = {};
    if (url !== undefined) input.url = url as string;
    if (events !== undefined) input.events = [...new Set(events as string[])];
    if (active !== undefined) input.active = active as boolean;
    return input;
  }
}
