import Type from 'typebox';
import { Secret } from '../../schemas/common.js';
import { deliverMessage } from '../deliver.js';
import type { DestinationType } from '../destination-type.js';
import { redactUrl } from '../url-guard.js';

/**
 * The webhook: a signed POST (Standard Webhooks) to an http(s) URL. Its secrets are special: the
 * signing secret rotates with a grace period, so what `send` gets is every secret still valid, and
 * its header values (often credentials) are kept with the secrets. Creating, rotating and checking
 * its URL stay in domain/destinations.ts, which predates the family.
 */

export interface WebhookMetadata {
  url: string;
  /** Decrypted header values. */
  headers?: Record<string, string>;
}

export interface WebhookSecrets {
  /** Every secret valid now: the current one and those still in their grace period. */
  signingSecrets: string[];
}

const WebhookUrl = Type.String({
  minLength: 1,
  maxLength: 2048,
  description:
    'An http(s) URL. Private, loopback and link-local addresses are refused unless FERRY_ALLOW_PRIVATE_DESTINATIONS is on.',
});

const Headers = Type.Record(Type.String(), Secret({ maxLength: 8192 }), {
  description:
    'Extra request headers (for example an Authorization header). Stored encrypted; values are shown only with includeSecrets=true.',
});

const SigningSecret = Secret({
  minLength: 1,
  description: 'A Standard Webhooks secret, `whsec_` and base64. Generated when absent.',
});

function safeUrl(url: string): string {
  try {
    return redactUrl(new URL(url));
  } catch {
    return '(invalid URL)';
  }
}

export const webhookType: DestinationType<WebhookMetadata, WebhookSecrets> = {
  type: 'webhook',
  title: 'A signed HTTP POST (Standard Webhooks) to your URL',
  messageIdOnFarSide: 'the `webhook-id` header (Standard Webhooks), signed with the body',
  metadata: Type.Object(
    { url: WebhookUrl, headers: Type.Optional(Headers) },
    { additionalProperties: false },
  ),
  secrets: Type.Object(
    { signingSecret: Type.Optional(SigningSecret), webhookSigningKey: Type.Optional(SigningSecret) },
    { additionalProperties: false },
  ),
  example: { metadata: { url: 'https://example.com/ferry', headers: { Authorization: 'Bearer …' } } },
  describe: (metadata) => safeUrl(metadata.url),
  send: (target, message, options) =>
    deliverMessage({
      url: target.metadata.url,
      headers: target.metadata.headers,
      body: message.body,
      messageId: message.messageId,
      secrets: target.secrets.signingSecrets,
      timeoutMs: options.timeoutMs,
      ...(message.timestamp && { timestamp: message.timestamp }),
      ...options.policy,
    }),
};
