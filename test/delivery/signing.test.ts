import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { generateSigningSecret, signatureHeaders, SigningSecretError } from '../../src/delivery/signing.js';

const body = JSON.stringify({ notificationType: 'installation.created', data: { installationId: 'i-1' } });

function unbranded(headers: ReturnType<typeof signatureHeaders>): Record<string, string> {
  return {
    'webhook-id': headers['webhook-id'],
    'webhook-timestamp': headers['webhook-timestamp'],
    'webhook-signature': headers['webhook-signature'] ?? '',
  };
}

/** A receiver written for Svix verifies the `svix-*` spelling of the same headers. */
function svixAsStandard(headers: ReturnType<typeof signatureHeaders>): Record<string, string> {
  return {
    'webhook-id': headers['svix-id'],
    'webhook-timestamp': headers['svix-timestamp'],
    'webhook-signature': headers['svix-signature'] ?? '',
  };
}

describe('generateSigningSecret', () => {
  it('makes whsec_ secrets of 32 random bytes that standardwebhooks accepts', () => {
    const secret = generateSigningSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(() => new Webhook(secret)).not.toThrow();
    expect(generateSigningSecret()).not.toBe(secret);
  });
});

describe('signatureHeaders', () => {
  it('is verified by standardwebhooks for the one secret given', () => {
    const secret = generateSigningSecret();
    const headers = signatureHeaders({ messageId: 'msg_1', timestamp: new Date(), body, secrets: [secret] });
    expect(new Webhook(secret).verify(body, unbranded(headers))).toEqual(JSON.parse(body));
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
  });

  it('signs with every secret, so a rotated-out secret still verifies during its grace period', () => {
    const [current, previous] = [generateSigningSecret(), generateSigningSecret()];
    const headers = signatureHeaders({
      messageId: 'msg_2',
      timestamp: new Date(),
      body,
      secrets: [current, previous],
    });
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    for (const secret of [current, previous]) {
      expect(new Webhook(secret).verify(body, unbranded(headers))).toEqual(JSON.parse(body));
    }
    expect(() => new Webhook(generateSigningSecret()).verify(body, unbranded(headers))).toThrow(
      WebhookVerificationError,
    );
  });

  it('repeats the values under svix-* names, which verify the same way', () => {
    const secret = generateSigningSecret();
    const timestamp = new Date();
    const headers = signatureHeaders({ messageId: 'msg_3', timestamp, body, secrets: [secret] });
    expect(headers['svix-id']).toBe('msg_3');
    expect(headers['svix-timestamp']).toBe(String(Math.floor(timestamp.getTime() / 1000)));
    expect(headers['svix-signature']).toBe(headers['webhook-signature']);
    expect(new Webhook(secret).verify(body, svixAsStandard(headers))).toEqual(JSON.parse(body));
  });

  it('is refused when the body, id or timestamp changed', () => {
    const secret = generateSigningSecret();
    const headers = unbranded(
      signatureHeaders({ messageId: 'msg_4', timestamp: new Date(), body, secrets: [secret] }),
    );
    const webhook = new Webhook(secret);
    expect(() => webhook.verify(`${body} `, headers)).toThrow(WebhookVerificationError);
    expect(() => webhook.verify(body, { ...headers, 'webhook-id': 'msg_5' })).toThrow(
      WebhookVerificationError,
    );
    const later = String(Number(headers['webhook-timestamp']) + 1);
    expect(() => webhook.verify(body, { ...headers, 'webhook-timestamp': later })).toThrow(
      WebhookVerificationError,
    );
  });

  it('sends no signature header when there are no secrets', () => {
    const headers = signatureHeaders({ messageId: 'msg_6', timestamp: new Date(), body, secrets: [] });
    expect(headers).not.toHaveProperty('webhook-signature');
    expect(headers).not.toHaveProperty('svix-signature');
    expect(headers['webhook-id']).toBe('msg_6');
  });

  it('rejects a malformed secret without echoing it', () => {
    const attempt = () =>
      signatureHeaders({
        messageId: 'm',
        timestamp: new Date(),
        body,
        secrets: [generateSigningSecret(), 'not-a-secret-xyz'],
      });
    expect(attempt).toThrow(SigningSecretError);
    const message = (() => {
      try {
        attempt();
      } catch (error) {
        return (error as Error).message;
      }
    })();
    expect(message).toBe('signing secret #2 is not a whsec_<base64> secret');
  });
});
