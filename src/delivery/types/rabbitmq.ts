import { isIP } from 'node:net';
import amqp, { type ChannelModel, type ConfirmChannel } from 'amqplib';
import Type from 'typebox';
import type { ProblemIssue } from '../../core/problem.js';
import { Secret } from '../../schemas/common.js';
import {
  acceptedSend,
  failedSend,
  SendTimeout,
  withDeadline,
  type DestinationTarget,
  type DestinationType,
} from '../destination-type.js';
import { assertDeliverableAddress, DestinationUrlError, guardedLookup } from '../url-guard.js';
import { shortReason } from './broker-errors.js';
import { serverUrlIssues } from './network.js';
import { fillTemplate, templateProblem } from './template.js';

/**
 * RabbitMQ (AMQP 0-9-1): each message is published persistent, `mandatory`, with `messageId` set
 * to Ferry's message id, on a confirm channel; it counts as delivered once the broker confirms it.
 * A message no queue is bound for comes back (basic.return) and is a retryable failure, not a
 * silent loss. One connection and channel per destination, kept while its settings stay the same.
 */

export interface RabbitmqMetadata {
  serverUrl: string;
  exchange: string;
  routingKeyTemplate?: string;
  tls?: boolean;
}

export interface RabbitmqSecrets {
  username: string;
  password: string;
}

interface Link {
  version: string;
  model: ChannelModel;
  channel: ConfirmChannel;
  /** Message ids the broker returned as unroutable; the return comes before the confirm. */
  returned: Set<string>;
  /** Why the channel or connection closed, when the broker said. */
  failure?: Error;
  closed: boolean;
}

const links = new Map<string, Promise<Link>>();

function close(link: Promise<Link>): void {
  void link.then((open) => open.model.close()).catch(() => {});
}

async function connect(
  target: DestinationTarget<RabbitmqMetadata, RabbitmqSecrets>,
  timeoutMs: number,
  allowPrivate: boolean,
): Promise<Link> {
  const url = new URL(target.metadata.serverUrl);
  const secure = url.protocol === 'amqps:' || target.metadata.tls === true;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) assertDeliverableAddress(host, { allowPrivate });
  const model = await amqp.connect(
    {
      protocol: secure ? 'amqps' : 'amqp',
      hostname: host,
      port: Number(url.port) || (secure ? 5671 : 5672),
      username: target.secrets.username,
      password: target.secrets.password,
      vhost: decodeURIComponent(url.pathname.slice(1)) || '/',
      heartbeat: 30,
    },
    { timeout: timeoutMs, ...(!allowPrivate && { lookup: guardedLookup({ allowPrivate }) }) },
  );
  const channel = await model.createConfirmChannel();
  const link: Link = { version: target.version, model, channel, returned: new Set(), closed: false };
  // Without these listeners a broker's channel error would be an uncaught exception.
  const closed = (error?: Error) => {
    link.closed = true;
    if (error) link.failure ??= error;
  };
  model.on('error', closed);
  model.on('close', closed);
  channel.on('error', closed);
  channel.on('close', () => closed());
  channel.on('return', (message) => {
    const id = message.properties.messageId as string | undefined;
    if (id) link.returned.add(id);
  });
  return link;
}

/** The destination's open link, connecting (again) when there is none or its settings changed. */
async function linkFor(
  target: DestinationTarget<RabbitmqMetadata, RabbitmqSecrets>,
  timeoutMs: number,
  allowPrivate: boolean,
): Promise<Link> {
  const existing = links.get(target.destinationId);
  if (existing) {
    const link = await existing.catch(() => undefined);
    if (link && !link.closed && link.version === target.version) return link;
    if (links.get(target.destinationId) === existing) links.delete(target.destinationId);
    close(existing);
  }
  const opening = connect(target, timeoutMs, allowPrivate);
  links.set(target.destinationId, opening);
  opening.catch(() => {
    if (links.get(target.destinationId) === opening) links.delete(target.destinationId);
  });
  return opening;
}

/** Routing keys are dot-separated words: a value with dots would add words of its own. */
const cleanWord = (value: string) => value.replace(/[.#*\s]/g, '_');

/** Broker refusals that another attempt would meet again: no exchange, no access, a bad argument. */
const PERMANENT =
  /\b(403|404|406|530)\b|ACCESS[-_]REFUSED|NOT[-_]FOUND|PRECONDITION[-_]FAILED|NOT[-_]ALLOWED/;

function classify(startedAt: number, error: unknown, link: Link | undefined) {
  if (error instanceof SendTimeout) return failedSend(startedAt, error.message, true, 'timeout');
  if (error instanceof DestinationUrlError) return failedSend(startedAt, error.message, false, 'refused');
  const cause = link?.failure ?? error;
  const reason = shortReason(cause);
  if (PERMANENT.test(reason)) return failedSend(startedAt, `RabbitMQ refused: ${reason}`, false, 'status');
  // No connection, a reset, a closed channel, a nack: the broker may take it on another attempt.
  return failedSend(startedAt, `RabbitMQ: ${reason}`, true, 'network');
}

function checkMetadata(metadata: RabbitmqMetadata): ProblemIssue[] {
  const issues = serverUrlIssues(metadata.serverUrl, ['amqp', 'amqps']);
  const template = templateProblem(metadata.routingKeyTemplate ?? '');
  if (template) issues.push({ in: 'body', name: 'metadata.routingKeyTemplate', detail: template });
  return issues;
}

export const rabbitmqType: DestinationType<RabbitmqMetadata, RabbitmqSecrets> = {
  type: 'rabbitmq',
  title: 'RabbitMQ: persistent messages on an exchange, publisher confirms',
  messageIdOnFarSide: 'the AMQP `messageId` property',
  metadata: Type.Object(
    {
      serverUrl: Type.String({
        minLength: 1,
        maxLength: 2048,
        description: 'amqp://host:port/vhost (or amqps://), without credentials: they go in secrets.',
      }),
      exchange: Type.String({
        maxLength: 255,
        description: 'The exchange to publish to; it must exist. An empty string is the default exchange.',
      }),
      routingKeyTemplate: Type.Optional(
        Type.String({
          maxLength: 255,
          default: '',
          description:
            'The routing key; `{field}` takes the message’s top-level field (`{action}.{objectName}`, `{notificationType}`), dots in values become `_`.',
        }),
      ),
      tls: Type.Optional(Type.Boolean({ description: 'Connect with TLS (as amqps:// does).' })),
    },
    { additionalProperties: false },
  ),
  secrets: Type.Object(
    {
      username: Secret({ minLength: 1, maxLength: 255 }),
      password: Secret({ maxLength: 1024 }),
    },
    { additionalProperties: false },
  ),
  example: {
    metadata: {
      serverUrl: 'amqp://127.0.0.1:5672/',
      exchange: 'ferry',
      routingKeyTemplate: '{action}.{objectName}',
    },
    secrets: { username: 'guest', password: 'guest' },
  },
  check: (metadata) => checkMetadata(metadata),
  describe(metadata) {
    try {
      const url = new URL(metadata.serverUrl);
      return `${url.protocol}//${url.host}${url.pathname} exchange "${metadata.exchange}"`;
    } catch {
      return `exchange "${metadata.exchange}"`;
    }
  },
  async send(target, message, options) {
    const startedAt = Date.now();
    const { exchange } = target.metadata;
    let link: Link | undefined;
    try {
      link = await withDeadline(
        linkFor(target, options.timeoutMs, options.policy.allowPrivate),
        options.timeoutMs,
        'connecting to RabbitMQ',
      );
      const routingKey = fillTemplate(target.metadata.routingKeyTemplate ?? '', message.body, cleanWord);
      const content = typeof message.body === 'string' ? Buffer.from(message.body, 'utf8') : message.body;
      const channel = link.channel;
      await withDeadline(
        new Promise<void>((resolve, reject) => {
          channel.publish(
            exchange,
            routingKey,
            content,
            {
              persistent: true,
              mandatory: true,
              messageId: message.messageId,
              contentType: 'application/json',
              timestamp: Math.floor(Date.now() / 1000),
              appId: 'ferry',
            },
            (error: unknown) =>
              error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(),
          );
        }),
        options.timeoutMs,
        'waiting for RabbitMQ to confirm',
      );
      if (link.returned.delete(message.messageId)) {
        return failedSend(
          startedAt,
          `no queue is bound to exchange "${exchange}" for routing key "${routingKey}"`,
          true,
          'status',
        );
      }
      return acceptedSend(startedAt, `exchange "${exchange}" routing key "${routingKey}": confirmed`);
    } catch (error) {
      const result = classify(startedAt, error, link);
      // A link that failed is not used again: the next attempt connects afresh.
      if (link) {
        link.closed = true;
        const entry = links.get(target.destinationId);
        if (entry) {
          links.delete(target.destinationId);
          close(entry);
        }
      }
      return result;
    }
  },
  async close() {
    const open = [...links.values()];
    links.clear();
    await Promise.all(open.map((link) => link.then((l) => l.model.close()).catch(() => {})));
  },
};
