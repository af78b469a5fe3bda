import Type from 'typebox';
import { deliverMessage } from '../deliver.js';
import { redactUrl } from '../url-guard.js';
import type { DestinationType } from '../destination-type.js';

/**
 * Slack: a readable line per message posted to an incoming-webhook URL — what happened (a read of
 * which object, how many records, which installation, a link to the operation; or which
 * notification) — never the records themselves, which may hold personal data a channel should not
 * see. Slack's answers are HTTP's: 429 and 5xx are retried, 404/410 (a removed webhook) are not.
 */

export interface SlackMetadata {
  url: string;
}

type Message = Record<string, unknown>;

const str = (value: unknown) => (typeof value === 'string' || typeof value === 'number' ? String(value) : '');

/** Slack's mrkdwn treats `<`, `>` and `&` as markup. */
const escape = (value: string) => value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function operationLink(message: Message, publicApiUrl: string | undefined): string {
  const operationId = str(message.operationId);
  const projectId = str(message.projectId);
  if (!operationId || !projectId || !publicApiUrl) return '';
  const url = `${publicApiUrl}/v1/projects/${projectId}/operations/${operationId}`;
  return ` <${url}|operation ${operationId.slice(0, 8)}>`;
}

/** The summary Slack shows; built from the message's identifiers and counts only. */
export function slackSummary(message: Message, publicApiUrl?: string): string {
  if (Array.isArray(message.result)) {
    const count =
      (message.resultInfo as { numRecords?: number } | undefined)?.numRecords ?? message.result.length;
    const deleted = message.result.filter((entry) => (entry as { deleted?: boolean }).deleted).length;
    const what = `${str(message.action) || 'read'}${message.readType ? ` (${str(message.readType)})` : ''}`;
    return [
      `*Ferry* ${escape(what)} of *${escape(str(message.objectName))}* from ${escape(str(message.provider))}:`,
      `${count} record${count === 1 ? '' : 's'}${deleted ? `, ${deleted} deleted` : ''}`,
      `for installation \`${escape(str(message.installationId))}\``,
      message.groupName ? `(${escape(str(message.groupName))})` : '',
    ]
      .filter(Boolean)
      .join(' ')
      .concat(operationLink(message, publicApiUrl));
  }
  const type = str(message.notificationType) || 'a notification';
  const data = (message.data ?? {}) as Message;
  const about = ['installationId', 'objectName', 'destinationName', 'operationId']
    .filter((key) => str(data[key]))
    .map((key) => `${key} \`${escape(str(data[key]))}\``);
  return [`*Ferry* notification *${escape(type)}*`, ...about].join(' · ');
}

export const slackType: DestinationType<SlackMetadata, Record<string, never>> = {
  type: 'slack',
  title: 'Slack: a readable summary per message in a channel (never the records)',
  messageIdOnFarSide: 'the `webhook-id` header of the post (Slack itself keeps no id)',
  metadata: Type.Object(
    {
      url: Type.String({
        minLength: 1,
        maxLength: 2048,
        description: 'The Slack incoming-webhook URL (https://hooks.slack.com/services/…).',
      }),
    },
    { additionalProperties: false },
  ),
  secrets: Type.Object({}, { additionalProperties: false }),
  example: { metadata: { url: 'https://hooks.slack.com/services/T000/B000/XXXX' } },
  check(metadata) {
    try {
      const url = new URL(metadata.url);
      if (url.protocol === 'https:' || url.protocol === 'http:') return [];
    } catch {
      // Reported below.
    }
    return [{ in: 'body', name: 'metadata.url', detail: 'metadata.url must be an http(s) URL' }];
  },
  // The path is the webhook's token: only the host is shown.
  describe(metadata) {
    try {
      return `${new URL(metadata.url).origin}/…`;
    } catch {
      return '(invalid URL)';
    }
  },
  redact(metadata) {
    return { ...metadata, url: slackType.describe(metadata) };
  },
  async send(target, message, options) {
    let parsed: Message = {};
    try {
      parsed = JSON.parse(typeof message.body === 'string' ? message.body : message.body.toString('utf8'));
    } catch {
      // Ferry's own messages are JSON; anything else gets a summary without details.
    }
    const result = await deliverMessage({
      url: target.metadata.url,
      body: JSON.stringify({
        text: slackSummary(parsed, options.publicApiUrl),
        unfurl_links: false,
        unfurl_media: false,
      }),
      messageId: message.messageId,
      secrets: [],
      timeoutMs: options.timeoutMs,
      ...options.policy,
    });
    // Errors name the URL without its query; a Slack webhook's token is its path, so that goes too.
    if (result.error) {
      try {
        result.error = result.error.replaceAll(
          redactUrl(new URL(target.metadata.url)),
          slackType.describe(target.metadata),
        );
      } catch {
        // An invalid URL never reached the receiver; its error names no path.
      }
    }
    return result;
  },
};
