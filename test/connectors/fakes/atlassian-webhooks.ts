import { createHmac, randomUUID } from 'node:crypto';
import type Router from '@koa/router';
import { FakeHttpError } from '../kit/fake-provider.js';

/**
 * Jira Cloud's dynamic webhooks for OAuth 2.0 apps as its reference describes them
 * (https://developer.atlassian.com/cloud/jira/platform/webhooks/,
 * https://developer.atlassian.com/cloud/jira/platform/rest/v3/api-group-webhooks/):
 *
 * - `POST /3/webhook` `{url, webhooks: [{events, jqlFilter, fieldIdsFilter?, issuePropertyKeysFilter?}]}`
 *   answers 200 `{webhookRegistrationResult: [{createdWebhookId} | {errors: [...]}]}`, one entry per
 *   webhook, in order: a webhook Jira cannot take is an entry with `errors`, not a failed request.
 *   `jqlFilter` is required and only a subset of JQL is supported: the fields `issueKey`, `project`,
 *   `issuetype`, `status`, `assignee`, `reporter`, `issue.property[…]`, `cf[id]`, the operators `=`,
 *   `!=`, `IN`, `NOT IN`, joined by `AND`/`OR` ("The clause watchCount is unsupported").
 * - `DELETE /3/webhook` `{webhookIds}` removes the app's webhooks (ids of other apps, or unknown ones,
 *   are ignored): 202. `GET /3/webhook` pages the app's webhooks. Webhooks "registered through the
 *   REST API expire after 30 days": `PUT /3/webhook/refresh` `{webhookIds}` extends them and answers
 *   `{expirationDate}`; an expired webhook gets nothing, and a refresh after its expiry does not revive it
 *   (the reference only says to refresh before; the fake takes the strict reading).
 * - A delivery is a POST to the registered URL of `{timestamp, webhookEvent, issue_event_type_name,
 *   user, issue, changelog?, matchedWebhookIds}` (`timestamp` in epoch milliseconds), one request per
 *   URL naming every matched webhook. Deliveries to OAuth 2.0 apps are not HMAC-signed: they carry
 *   `Authorization: Bearer <JWT>`, the token signed HS256 with the app's client secret
 *   ("Webhooks authentication for OAuth 2.0 apps"). The token's claims beyond that are not
 *   documented: the fake sets `iat` and `exp` (3 minutes). The token does not cover the body.
 *   `X-Atlassian-Webhook-Identifier` names the delivery (the same on a retry), with
 *   `X-Atlassian-Webhook-Retry` counting retries.
 * - Not modelled (verify): "Only a single URL per app is allowed to be registered" (the reference
 *   says so for Connect apps' base URL) and the per-app limit on webhooks.
 */

const THIRTY_DAYS_MS = 30 * 86_400_000;
const events = [
  'jira:issue_created',
  'jira:issue_updated',
  'jira:issue_deleted',
  'comment_created',
  'comment_updated',
  'comment_deleted',
  'issue_property_set',
  'issue_property_deleted',
];

export interface JiraWebhook {
  id: number;
  url: string;
  events: string[];
  jqlFilter: string;
  fieldIdsFilter?: string[];
  issuePropertyKeysFilter?: string[];
  /** Epoch milliseconds. */
  expiresAt: number;
}

/** Dynamic webhooks the fake holds, by id. */
export const jiraWebhooks = new Map<number, JiraWebhook>();
let nextWebhookId = 10_000;

type Clause = { field: string; operator: string; values: string[] };

/** The JQL of a dynamic webhook as clauses (OR of ANDs), or the error Jira gives. */
export function webhookJql(jql: string): Clause[][] | string {
  const supported =
    /^(issueKey|project|issuetype|status|assignee|reporter|issue\.property\[[^\]]+\](?:\.[\w.]+)?|cf\[\d+\])$/i;
  const groups: Clause[][] = [];
  for (const part of jql.split(/\s+OR\s+/i)) {
    const group: Clause[] = [];
    for (const text of part.split(/\s+AND\s+/i)) {
      const match = /^\s*([^\s!=]+)\s*(=|!=|NOT\s+IN|IN|[^\s\w"'(]+|IS\s+NOT|IS|~|WAS)\s*(.*?)\s*$/i.exec(
        text,
      );
      if (!match || !match[3]) return `Error in the JQL Query: ${text.trim()}`;
      const [, field, operator, rest] = match;
      if (!supported.test(field)) return `The clause ${field} is unsupported`;
      const op = operator.toUpperCase().replace(/\s+/g, ' ');
      if (!['=', '!=', 'IN', 'NOT IN'].includes(op)) return `The operator '${operator}' is unsupported`;
      const list = op.endsWith('IN') ? /^\((.*)\)$/.exec(rest)?.[1] : rest;
      if (list === undefined) return `Error in the JQL Query: ${text.trim()}`;
      const values = list.split(',').map((value) => value.trim().replace(/^["']|["']$/g, ''));
      group.push({ field: field.toLowerCase(), operator: op, values });
    }
    groups.push(group);
  }
  return groups;
}

type Issue = { id: string; key: string; fields: Record<string, unknown> };

/** Whether an issue matches a webhook's JQL (fields the fake cannot tell are taken to match). */
function matches(jql: string, issue: Issue): boolean {
  const groups = webhookJql(jql);
  if (typeof groups === 'string') return false;
  const valuesOf = (field: string): string[] => {
    const named = (value: unknown) =>
      value && typeof value === 'object'
        ? ['id', 'key', 'name']
            .map((k) => (value as Record<string, unknown>)[k])
            .filter(Boolean)
            .map(String)
        : [];
    if (field === 'issuekey') return [issue.key, issue.id];
    if (field === 'project') return named(issue.fields.project).map((v) => v.toUpperCase());
    if (field === 'issuetype') return named(issue.fields.issuetype);
    if (field === 'status') return named(issue.fields.status);
    return [];
  };
  return groups.some((group) =>
    group.every(({ field, operator, values }) => {
      if (!['issuekey', 'project', 'issuetype', 'status'].includes(field)) return true;
      const have = valuesOf(field);
      const hit = values.some((value) => have.includes(field === 'project' ? value.toUpperCase() : value));
      return operator === '=' || operator === 'IN' ? hit : !hit;
    }),
  );
}

const jiraError = (message: string) =>
  new FakeHttpError(400, JSON.stringify({ errorMessages: [message], errors: {} }), 'jira');
const jiraTimeOf = (ms: number) => new Date(ms).toISOString().replace('Z', '+0000');

function idsOf(body: unknown): number[] {
  const ids = (body as { webhookIds?: unknown })?.webhookIds;
  if (!Array.isArray(ids) || !ids.length) throw jiraError('webhookIds must not be empty');
  return ids.map(Number);
}

/** The webhook routes, on the fake's router (prefix `…/rest/api`). */
export function addJiraWebhookRoutes(router: Router, now: () => number): void {
  router.post('/3/webhook', (ctx) => {
    const body = (ctx.request.body ?? {}) as { url?: unknown; webhooks?: unknown };
    if (typeof body.url !== 'string' || !body.url) throw jiraError('url must not be empty');
    if (!Array.isArray(body.webhooks) || !body.webhooks.length) throw jiraError('webhooks must not be empty');
    const results = (body.webhooks as Record<string, unknown>[]).map((webhook) => {
      const asked = webhook.events;
      if (!Array.isArray(asked) || !asked.length) return { errors: ['events must not be empty'] };
      const unknown = asked.find((event) => !events.includes(String(event)));
      if (unknown !== undefined) return { errors: [`Unsupported event: ${String(unknown)}`] };
      if (typeof webhook.jqlFilter !== 'string' || !webhook.jqlFilter.trim())
        return { errors: ['jqlFilter must not be empty'] };
      const jql = webhookJql(webhook.jqlFilter);
      if (typeof jql === 'string') return { errors: [jql] };
      const id = nextWebhookId++;
      jiraWebhooks.set(id, {
        id,
        url: body.url as string,
        events: asked.map(String),
        jqlFilter: webhook.jqlFilter,
        ...(Array.isArray(webhook.fieldIdsFilter) && { fieldIdsFilter: webhook.fieldIdsFilter.map(String) }),
        ...(Array.isArray(webhook.issuePropertyKeysFilter) && {
          issuePropertyKeysFilter: webhook.issuePropertyKeysFilter.map(String),
        }),
        expiresAt: now() + THIRTY_DAYS_MS,
      });
      return { createdWebhookId: id };
    });
    ctx.body = { webhookRegistrationResult: results };
  });

  router.delete('/3/webhook', (ctx) => {
    for (const id of idsOf(ctx.request.body)) jiraWebhooks.delete(id);
    ctx.status = 202;
  });

  router.put('/3/webhook/refresh', (ctx) => {
    const expiresAt = now() + THIRTY_DAYS_MS;
    for (const id of idsOf(ctx.request.body)) {
      const webhook = jiraWebhooks.get(id);
      // An expired webhook is over: a late refresh does not bring it back (the app registers anew).
      if (webhook && webhook.expiresAt > now()) webhook.expiresAt = expiresAt;
    }
    ctx.body = { expirationDate: jiraTimeOf(expiresAt) };
  });

  router.get('/3/webhook', (ctx) => {
    const startAt = Number(ctx.query.startAt ?? 0);
    const maxResults = Math.min(Number(ctx.query.maxResults ?? 100), 100);
    const all = [...jiraWebhooks.values()];
    const values = all.slice(startAt, startAt + maxResults).map(({ expiresAt, url, ...webhook }) => ({
      ...webhook,
      url,
      expirationDate: jiraTimeOf(expiresAt),
    }));
    ctx.body = { isLast: startAt + maxResults >= all.length, maxResults, startAt, total: all.length, values };
  });
}

const base64url = (value: string | Buffer) => Buffer.from(value).toString('base64url');

/** A token as Jira puts in `Authorization: Bearer`: HS256 with the app's client secret. */
export function jiraWebhookToken(
  clientSecret: string,
  options: { issuedAt?: number; lifetimeSeconds?: number; alg?: string } = {},
): string {
  const iat = Math.floor((options.issuedAt ?? Date.now()) / 1000);
  const header = base64url(JSON.stringify({ alg: options.alg ?? 'HS256', typ: 'JWT' }));
  const claims = base64url(JSON.stringify({ iat, exp: iat + (options.lifetimeSeconds ?? 180) }));
  const signature =
    options.alg === 'none'
      ? ''
      : createHmac('sha256', clientSecret).update(`${header}.${claims}`).digest('base64url');
  return `${header}.${claims}.${signature}`;
}

export interface JiraIssueEvent {
  webhookEvent: 'jira:issue_created' | 'jira:issue_updated' | 'jira:issue_deleted';
  /** The issue as the REST API answers it (as it was, for a deletion). */
  issue: Issue & Record<string, unknown>;
  /** For updates: what changed, as changelog items. */
  changes?: { fieldId: string; from: string | null; to: string | null }[];
  timestamp?: number;
}

const typeNames = {
  'jira:issue_created': 'issue_created',
  'jira:issue_updated': 'issue_generic',
  'jira:issue_deleted': 'issue_deleted',
};

/**
 * What Jira posts for an issue event: one request per URL whose webhooks match it (the event asked
 * for, the JQL matching, not expired), each with its headers and raw body.
 */
export function jiraWebhookDeliveries(
  clientSecret: string,
  event: JiraIssueEvent,
  options: { now?: number; token?: string } = {},
): { url: string; headers: Record<string, string>; body: string }[] {
  const now = options.now ?? Date.now();
  const byUrl = new Map<string, number[]>();
  for (const webhook of jiraWebhooks.values()) {
    if (webhook.expiresAt <= now || !webhook.events.includes(event.webhookEvent)) continue;
    if (!matches(webhook.jqlFilter, event.issue)) continue;
    byUrl.set(webhook.url, [...(byUrl.get(webhook.url) ?? []), webhook.id]);
  }
  return [...byUrl].map(([url, matchedWebhookIds]) => {
    const body = JSON.stringify({
      timestamp: event.timestamp ?? now,
      webhookEvent: event.webhookEvent,
      issue_event_type_name: typeNames[event.webhookEvent],
      user: { accountId: '5b10a2844c20165700ede21g', displayName: 'Mia Krystof', active: true },
      issue: event.issue,
      ...(event.changes && {
        changelog: {
          id: String(Math.floor(now / 1000)),
          items: event.changes.map((change) => ({
            field: change.fieldId,
            fieldtype: change.fieldId.startsWith('customfield_') ? 'custom' : 'jira',
            fieldId: change.fieldId,
            from: null,
            fromString: change.from,
            to: null,
            toString: change.to,
          })),
        },
      }),
      matchedWebhookIds,
    });
    return {
      url,
      headers: {
        'content-type': 'application/json; charset=UTF-8',
        'user-agent': 'Atlassian Webhook HTTP Client',
        authorization: `Bearer ${options.token ?? jiraWebhookToken(clientSecret)}`,
        'x-atlassian-webhook-identifier': randomUUID(),
      },
      body,
    };
  });
}
