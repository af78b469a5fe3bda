import { createHmac, randomUUID } from 'node:crypto';
import type Router from '@koa/router';
import { FakeHttpError } from '../kit/fake-provider.js';

/**
 * GitHub's repository webhooks, as its reference describes them
 * (https://docs.github.com/en/rest/repos/webhooks, /webhooks/webhook-events-and-payloads,
 * /webhooks/using-webhooks/validating-webhook-deliveries):
 *
 * - `POST /repos/{owner}/{repo}/hooks` (201): `name` (`web`), `config` {`url` required,
 *   `content_type` `form` by default or `json`, `secret`, `insecure_ssl`}, `events` (`["push"]` by
 *   default), `active` (true). The answer shows a secret as `********`. GitHub then sends a `ping`.
 * - `PATCH /repos/{owner}/{repo}/hooks/{hook_id}`: `config` replaces the config, and "if you
 *   previously had a secret set, you must provide the same secret or set a new secret or the secret
 *   will be removed"; `events`, `add_events`, `remove_events`, `active`. `GET` and `DELETE` (204)
 *   by id; an unknown id answers 404.
 * - A delivery: `X-GitHub-Event` (the event name), `X-GitHub-Delivery` (a GUID, the same on a
 *   redelivery), `X-GitHub-Hook-ID`, `X-GitHub-Hook-Installation-Target-Type`/`-ID`,
 *   `User-Agent: GitHub-Hookshot/…`, and with a secret `X-Hub-Signature-256: sha256=<hex HMAC-SHA256
 *   of the body>` (and the legacy SHA-1 `X-Hub-Signature`). The body is the JSON payload, or, for a
 *   `form` hook, `payload=<the JSON, URL-encoded>`. The payload names the action (`opened`,
 *   `edited` with `changes: {field: {from}}`, `deleted`…) but not the event, and carries no event id.
 */

export interface GithubHook {
  type: 'Repository';
  id: number;
  name: string;
  active: boolean;
  events: string[];
  config: { url: string; content_type: string; insecure_ssl: string; secret?: string };
  created_at: string;
  updated_at: string;
}

/** Hooks the fake holds, by id, with their secrets as given. */
export const githubHooks = new Map<number, GithubHook>();

const EVENTS = ['*', 'push', 'issues', 'issue_comment', 'milestone', 'label', 'pull_request', 'release'];
const time = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
let nextHookId = 480_000_001;

function invalid(message: string): FakeHttpError {
  return new FakeHttpError(
    422,
    JSON.stringify([{ resource: 'Hook', code: 'custom', message }]),
    'validation',
  );
}

function configOf(value: unknown): GithubHook['config'] {
  const config = (value ?? {}) as Record<string, unknown>;
  if (typeof config.url !== 'string' || !/^https?:\/\//.test(config.url))
    throw invalid('Config must contain a valid url');
  const contentType = config.content_type === undefined ? 'form' : String(config.content_type);
  if (contentType !== 'form' && contentType !== 'json') throw invalid('Config content_type is invalid');
  return {
    url: config.url,
    content_type: contentType,
    insecure_ssl: String(config.insecure_ssl ?? '0'),
    ...(typeof config.secret === 'string' && config.secret && { secret: config.secret }),
  };
}

function eventsOf(value: unknown): string[] {
  if (!Array.isArray(value) || value.some((event) => !EVENTS.includes(String(event))))
    throw invalid('Events are invalid');
  return [...new Set(value.map(String))];
}

/** A hook as the API shows it: the secret masked. */
function shown(hook: GithubHook, hooksUrl: string) {
  const { secret, ...config } = hook.config;
  const url = `${hooksUrl}/${hook.id}`;
  return {
    ...hook,
    config: { ...config, ...(secret && { secret: '********' }) },
    url,
    test_url: `${url}/test`,
    ping_url: `${url}/pings`,
    deliveries_url: `${url}/deliveries`,
    last_response: { code: null, status: 'unused', message: null },
  };
}

/** Adds the repository webhook routes to the fake's router (behind its repository check). */
export function githubHookRoutes(router: Router, hooksUrl: () => string, now: () => number): void {
  const hookOf = (id: string) => {
    const hook = githubHooks.get(Number(id));
    if (!hook) throw new FakeHttpError(404, 'Not Found');
    return hook;
  };
  router.post('/repos/:owner/:repo/hooks', (ctx) => {
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    if (body.name !== undefined && body.name !== 'web') throw invalid('Name must be web');
    const at = time(now());
    const hook: GithubHook = {
      type: 'Repository',
      id: nextHookId++,
      name: 'web',
      active: body.active === undefined ? true : Boolean(body.active),
      events: body.events === undefined ? ['push'] : eventsOf(body.events),
      config: configOf(body.config),
      created_at: at,
      updated_at: at,
    };
    githubHooks.set(hook.id, hook);
    ctx.status = 201;
    ctx.body = shown(hook, hooksUrl());
  });
  router.get('/repos/:owner/:repo/hooks/:id', (ctx) => {
    ctx.body = shown(hookOf(ctx.params.id), hooksUrl());
  });
  router.patch('/repos/:owner/:repo/hooks/:id', (ctx) => {
    const hook = hookOf(ctx.params.id);
    const body = (ctx.request.body ?? {}) as Record<string, unknown>;
    // A new config replaces the old one whole: a secret left out is removed.
    if (body.config !== undefined) hook.config = configOf(body.config);
    if (body.events !== undefined) hook.events = eventsOf(body.events);
    if (body.add_events !== undefined)
      hook.events = [...new Set([...hook.events, ...eventsOf(body.add_events)])];
    if (body.remove_events !== undefined) {
      const removed = eventsOf(body.remove_events);
      hook.events = hook.events.filter((event) => !removed.includes(event));
    }
    if (body.active !== undefined) hook.active = Boolean(body.active);
    hook.updated_at = time(now());
    ctx.body = shown(hook, hooksUrl());
  });
  router.delete('/repos/:owner/:repo/hooks/:id', (ctx) => {
    hookOf(ctx.params.id);
    githubHooks.delete(Number(ctx.params.id));
    ctx.status = 204;
  });
}

export interface GithubDeliveryOptions {
  /** Sign with this secret instead of the hook's (a forgery). */
  secret?: string;
  /** The delivery GUID; a redelivery repeats the original's. */
  deliveryId?: string;
}

/** A delivery of `event` to a hook, as GitHub posts it: headers and the raw body. */
export function githubWebhookDelivery(
  hookId: number,
  event: string,
  payload: Record<string, unknown>,
  options: GithubDeliveryOptions = {},
): { headers: Record<string, string>; body: string; deliveryId: string } {
  const hook = githubHooks.get(hookId);
  if (!hook) throw new Error(`no GitHub hook ${hookId}`);
  // GitHub sends a hook only the events it subscribes to (and its ping).
  if (event !== 'ping' && !hook.events.includes(event) && !hook.events.includes('*'))
    throw new Error(`GitHub hook ${hookId} is not subscribed to ${event}`);
  const json = JSON.stringify(payload);
  const form = hook.config.content_type !== 'json';
  const body = form ? `payload=${encodeURIComponent(json)}` : json;
  const deliveryId = options.deliveryId ?? randomUUID();
  const secret = options.secret ?? hook.config.secret;
  const repository = payload.repository as { id?: number } | undefined;
  const headers: Record<string, string> = {
    'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json',
    'user-agent': 'GitHub-Hookshot/7e4d2f1',
    'x-github-event': event,
    'x-github-delivery': deliveryId,
    'x-github-hook-id': String(hook.id),
    'x-github-hook-installation-target-type': 'repository',
    'x-github-hook-installation-target-id': String(repository?.id ?? 0),
  };
  if (secret) {
    headers['x-hub-signature'] = `sha1=${createHmac('sha1', secret).update(body).digest('hex')}`;
    headers['x-hub-signature-256'] = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  }
  return { headers, body, deliveryId };
}

/** The repository and sender every repository event carries. */
export function githubEventContext(owner: string, repo: string, apiUrl: string) {
  return {
    repository: {
      id: 1296269,
      node_id: 'MDEwOlJlcG9zaXRvcnkxMjk2MjY5',
      name: repo,
      full_name: `${owner}/${repo}`,
      private: false,
      owner: { login: owner, id: 9919, type: 'Organization' },
      html_url: `https://github.com/${owner}/${repo}`,
      url: `${apiUrl}/repos/${owner}/${repo}`,
    },
    sender: { login: 'octocat', id: 1, type: 'User' },
  };
}

/** The `ping` GitHub sends when a hook is made. */
export function githubPingPayload(hookId: number, context: ReturnType<typeof githubEventContext>) {
  const hook = githubHooks.get(hookId)!;
  const { secret: _secret, ...config } = hook.config;
  return { zen: 'Design for failure.', hook_id: hookId, hook: { ...hook, config }, ...context };
}
