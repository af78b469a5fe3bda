import { scopeDescriptions, type OAuthClient, type PendingAuthorization } from './tokens.js';

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Sandbox CRM</title>
<style>
  body { font-family: system-ui, sans-serif; background: #f4f5f7; margin: 0; padding: 3rem 1rem; color: #1d2330; }
  main { max-width: 28rem; margin: 0 auto; background: #fff; border-radius: 12px; padding: 2rem;
         box-shadow: 0 2px 12px rgba(0, 0, 0, .08); }
  h1 { font-size: 1.3rem; margin-top: 0; }
  li { margin: .4rem 0; }
  code { background: #eef0f4; padding: 0 .25rem; border-radius: 4px; }
  .actions { display: flex; gap: .75rem; margin-top: 1.5rem; }
  button { flex: 1; font-size: 1rem; padding: .7rem; border-radius: 8px; border: 1px solid #c7ccd6; cursor: pointer; }
  button[value=approve] { background: #2f6fed; border-color: #2f6fed; color: #fff; }
  .muted { color: #667085; font-size: .85rem; }
</style>
</head>
<body><main>
${body}
</main></body>
</html>
`;
}

/**
 * The consent screen. The form posts the pending request's id and decision=approve|deny to
 * /oauth/authorize/decision; everything else about the request stays on the server.
 */
export function consentPage(client: OAuthClient, pending: PendingAuthorization): string {
  const scopes = pending.scope
    .map(
      (scope) => `<li><code>${escapeHtml(scope)}</code> ${escapeHtml(scopeDescriptions[scope] ?? '')}</li>`,
    )
    .join('\n');
  return page(
    `Authorize ${client.name}`,
    `<h1><strong>${escapeHtml(client.name)}</strong> wants to access your Sandbox CRM account</h1>
<p>It is asking permission to:</p>
<ul class="scopes">
${scopes}
</ul>
<form method="post" action="/oauth/authorize/decision">
  <input type="hidden" name="request_id" value="${escapeHtml(pending.id)}">
  <div class="actions">
    <button type="submit" name="decision" value="deny">Deny</button>
    <button type="submit" name="decision" value="approve">Approve</button>
  </div>
</form>
<p class="muted">You will be sent back to ${escapeHtml(new URL(pending.redirectUri).origin)}.</p>`,
  );
}

export function errorPage(title: string, message: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1>\n<p class="error">${escapeHtml(message)}</p>`);
}
