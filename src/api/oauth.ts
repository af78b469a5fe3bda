import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { ProblemError } from '../core/problem.js';
import { defineRoute, type HandlerResult } from './route.js';
import { assertActsForGroupId, resolveProject, scopedGroupRef } from '../domain/project-access.js';
import { findConnection } from '../domain/connections/lookups.js';
import { logger } from '../logger.js';
import { getProvider } from '../providers/catalog/index.js';
import { ConnectionParams } from '../schemas/connections.js';
import { AuthorizationUrlSchema, OAuthCallbackQuery, OAuthConnectBody } from '../schemas/oauth.js';
import {
  completeOAuthCallback,
  startOAuthConnect,
  startOAuthUpdate,
  type CallbackResult,
} from '../domain/oauth.js';

/** What the browser's way back from the provider may answer. */
const callbackResponses = {
  200: { description: 'The connection was saved', contentType: 'text/html' },
  302: { description: 'Redirect to the redirectUrl given to /oauth-connect' },
  400: { description: 'Nothing was connected; the page says why', contentType: 'text/html' },
  500: { description: 'Ferry failed; nothing was connected', contentType: 'text/html' },
} as const;
type CallbackAnswer = HandlerResult<typeof callbackResponses>;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** JSON that is safe inside a <script> element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

const pageHeaders = (nonce: string): Record<string, string> => ({
  'Cache-Control': 'no-store',
  // The callback URL carried an authorization code: never leak it to another site.
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'Content-Security-Policy': `default-src 'none'; style-src 'unsafe-inline'; script-src 'nonce-${nonce}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
});

/**
 * The page the browser lands on after the provider: it tells the window that opened the flow
 * (`postMessage({type: 'ferry:oauth', ...})`, then the public React components' own message,
 * `{eventType: 'AUTHORIZATION_SUCCEEDED', data: {connection}}` or `AUTHORIZATION_FAILED`) and
 * closes; opened directly, it shows the result.
 */
export function callbackPage(result: CallbackResult, httpStatus: 200 | 400 | 500): CallbackAnswer {
  const providerName = result.provider
    ? (getProvider(result.provider)?.displayName ?? result.provider)
    : undefined;
  const success = result.status === 'success';
  const title = success ? `Connected${providerName ? ` to ${providerName}` : ''}` : 'The connection failed';
  const message = success ? 'You can close this window.' : result.error;
  const payload = success
    ? { type: 'ferry:oauth', status: 'success', connectionId: result.connectionId, provider: result.provider }
    : { type: 'ferry:oauth', status: 'failure', error: result.error, provider: result.provider };
  // What the public React components (`@amp-labs/react`) wait for; they check that the message comes
  // from the origin of their API base URL, which is this page's.
  const componentsPayload = success
    ? { eventType: 'AUTHORIZATION_SUCCEEDED', data: { connection: result.connection } }
    : { eventType: 'AUTHORIZATION_FAILED', data: { error: result.error }, message: result.error };
  const nonce = randomBytes(16).toString('base64');
  const body = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Ferry</title>
<style>
  body { font-family: system-ui, sans-serif; background: #f4f5f7; margin: 0; padding: 3rem 1rem; color: #1d2330; }
  main { max-width: 28rem; margin: 0 auto; background: #fff; border-radius: 12px; padding: 2rem; box-shadow: 0 2px 12px rgba(0,0,0,.08); }
  h1 { font-size: 1.3rem; margin-top: 0; }
  .failure h1 { color: #b42318; }
</style>
</head>
<body>
<main class="${success ? 'success' : 'failure'}" data-status="${success ? 'success' : 'failure'}">
<h1>${escapeHtml(title)}</h1>
<p id="message">${escapeHtml(message)}</p>
</main>
<script nonce="${nonce}">
  (function () {
    var result = ${scriptJson(payload)};
    var components = ${scriptJson(componentsPayload)};
    if (window.opener && window.opener !== window) {
      try {
        window.opener.postMessage(result, '*');
        window.opener.postMessage(components, '*');
      } finally { window.close(); }
    }
  })();
</script>
</body>
</html>
`;
  return { status: httpStatus, body, contentType: 'text/html; charset=utf-8', headers: pageHeaders(nonce) };
}

function redirectWithResult(result: CallbackResult, redirectUrl: string): CallbackAnswer {
  const url = new URL(redirectUrl);
  url.searchParams.set('status', result.status);
  if (result.status === 'success') url.searchParams.set('connectionId', result.connectionId);
  else url.searchParams.set('error', result.error);
  return {
    status: 302,
    headers: { Location: url.toString(), 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer' },
  };
}

/**
 * An authorization URL as the public API answers it: `text/plain`, the bare URL; as a JSON string to
 * a client whose `Accept` prefers `application/json` (Ferry's answer before, which its console reads).
 */
const authorizationUrlAnswer = {
  description: 'The authorization URL: plain text, or a JSON string when `Accept` prefers JSON',
  schema: AuthorizationUrlSchema,
  contentType: 'text/plain',
  alsoAs: ['application/json'],
};

function authorizationUrl(koa: Context, url: string) {
  const json = koa.accepts('text/plain', 'application/json') === 'application/json';
  return { status: 200 as const, body: url, ...(json && { contentType: 'application/json' }) };
}

export const oauthRoutes = [
  defineRoute({
    method: 'POST',
    path: '/oauth-connect',
    operationId: 'oauthConnect',
    summary: 'Start an OAuth flow: get the provider’s authorization URL',
    description:
      'Open the returned URL in a browser (a popup or a redirect). The URL carries a single-use state valid for 10 minutes and, where the provider supports it, a PKCE challenge. After consent the provider sends the browser to `/v1/oauth-callback`, which creates the group’s connection (or renews it) and posts `{type: "ferry:oauth", status, connectionId | error}` to the opener window.',
    tags: ['OAuth'],
    // A browser starts the flow with a project JWT its backend minted for one group (`groupRef`
    // claim), so the project's secret key never reaches the page.
    auth: ['apiKey', 'projectJwt'],
    body: OAuthConnectBody,
    responses: { 200: authorizationUrlAnswer },
  }).handle(async ({ em, principal, body, koa, settings }) => {
    if (principal.kind === 'projectJwt' && principal.groupRef !== body.groupRef) {
      throw new ProblemError({
        status: 403,
        detail: principal.groupRef
          ? `This token acts for group "${principal.groupRef}", not "${body.groupRef}".`
          : 'A project JWT starts an OAuth flow only for the group it names: mint it with a "groupRef" claim.',
      });
    }
    const project = await resolveProject(principal, body.projectIdOrName, em);
    return authorizationUrl(koa, await startOAuthConnect(em, project, body, settings.publicApiUrl));
  }),
  defineRoute({
    method: 'PATCH',
    path: '/projects/{projectIdOrName}/connections/{connectionId}:oauth-update',
    operationId: 'oauthUpdateConnection',
    summary: 'Get an authorization URL that re-authorizes an existing connection',
    description:
      'No body. Completing the flow renews this connection’s tokens and sets it back to `working`.',
    tags: ['OAuth'],
    auth: ['apiKey', 'bearer', 'projectJwt'],
    params: ConnectionParams,
    responses: { 200: authorizationUrlAnswer },
  }).handle(async ({ em, project, params, principal, koa, settings }) => {
    if (scopedGroupRef(principal) !== undefined) {
      const connection = await findConnection(em, project.id, params.connectionId);
      await assertActsForGroupId(em, principal, connection.groupId);
    }
    return authorizationUrl(
      koa,
      await startOAuthUpdate(em, project, params.connectionId, settings.publicApiUrl),
    );
  }),
  defineRoute({
    method: 'GET',
    path: '/oauth-callback',
    operationId: 'oauthCallback',
    summary: 'Where providers send the browser back after consent',
    description:
      'Not called by clients. Answers an HTML page (200 on success, 400 with the reason otherwise), or redirects to the `redirectUrl` the flow was started with.',
    tags: ['OAuth'],
    auth: ['none'],
    query: OAuthCallbackQuery,
    responses: callbackResponses,
  }).handle(async ({ em, query }) => {
    let result: CallbackResult;
    try {
      result = await completeOAuthCallback(em, query);
    } catch (error) {
      logger.error({ err: error }, 'OAuth callback failed');
      return callbackPage(
        { status: 'failure', error: 'Ferry failed unexpectedly; nothing was connected. Try again.' },
        500,
      );
    }
    if (result.redirectUrl) return redirectWithResult(result, result.redirectUrl);
    return callbackPage(result, result.status === 'success' ? 200 : 400);
  }),
];
