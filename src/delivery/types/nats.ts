import { connect, headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, type JetStreamClient } from '@nats-io/jetstream';
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
import { DestinationUrlError } from '../url-guard.js';
import { shortReason } from './broker-errors.js';
import { checkedAddress, hostPort, serverUrlIssues } from './network.js';
import { fillTemplate, templateProblem } from './template.js';

/**
 * NATS JetStream: each message is published on a subject a stream captures, with `Nats-Msg-Id` set
 * to Ferry's message id (so the stream's duplicate window drops a redelivery), and counts as
 * delivered once the stream acknowledges it (the ack names the stream and sequence, which go to the
 * attempts ledger). One connection per destination, kept while its settings stay the same.
 */

export interface NatsMetadata {
  serverUrl: string;
  subjectTemplate: string;
  stream?: string;
}

export interface NatsSecrets {
  username?: string;
  password?: string;
  token?: string;
}

interface Link {
  version: string;
  connection: NatsConnection;
  js: JetStreamClient;
}

const links = new Map<string, Promise<Link>>();

async function open(
  target: DestinationTarget<NatsMetadata, NatsSecrets>,
  timeoutMs: number,
  allowPrivate: boolean,
): Promise<Link> {
  const url = new URL(target.metadata.serverUrl);
  const address = await checkedAddress(url.hostname, allowPrivate);
  const { username, password, token } = target.secrets;
  const connection = await connect({
    servers: hostPort(address, Number(url.port) || 4222),
    timeout: timeoutMs,
    name: 'ferry-destination',
    ...(url.protocol === 'tls:' && { tls: { handshakeFirst: false } }),
    ...(username !== undefined && { user: username, pass: password ?? '' }),
    ...(token !== undefined && { token }),
  });
  return { version: target.version, connection, js: jetstream(connection, { timeout: timeoutMs }) };
}

async function linkFor(
  target: DestinationTarget<NatsMetadata, NatsSecrets>,
  timeoutMs: number,
  allowPrivate: boolean,
): Promise<Link> {
  const existing = links.get(target.destinationId);
  if (existing) {
    const link = await existing.catch(() => undefined);
    if (link && !link.connection.isClosed() && link.version === target.version) return link;
    if (links.get(target.destinationId) === existing) links.delete(target.destinationId);
    if (link && !link.connection.isClosed()) void link.connection.close().catch(() => {});
  }
  const opening = open(target, timeoutMs, allowPrivate);
  links.set(target.destinationId, opening);
  opening.catch(() => {
    if (links.get(target.destinationId) === opening) links.delete(target.destinationId);
  });
  return opening;
}

/** Subjects are dot-separated tokens: a value's dots, spaces and wildcards become `_`. */
const cleanToken = (value: string) => value.replace(/[.*>\s]/g, '_') || '_';

/** Refusals another attempt would meet again: permissions, a stream that is not the expected one. */
const PERMANENT = /authorization|permission|authentication|expected stream|wrong last|10060|bad subject/i;

export const natsType: DestinationType<NatsMetadata, NatsSecrets> = {
  type: 'nats',
  title: 'NATS JetStream: a subject a stream captures, deduplicated by Nats-Msg-Id',
  messageIdOnFarSide: 'the `Nats-Msg-Id` header (JetStream drops a repeat within its duplicate window)',
  metadata: Type.Object(
    {
      serverUrl: Type.String({
        minLength: 1,
        maxLength: 2048,
        description: 'nats://host:4222 (or tls://), without credentials: they go in secrets.',
      }),
      subjectTemplate: Type.String({
        minLength: 1,
        maxLength: 255,
        description:
          'The subject; `{field}` takes the message’s top-level field (`ferry.{action}.{objectName}`). A stream must capture it.',
      }),
      stream: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 255,
          description: 'The stream expected to store the message; another one storing it is a failure.',
        }),
      ),
    },
    { additionalProperties: false },
  ),
  secrets: Type.Object(
    {
      username: Type.Optional(Secret({ minLength: 1, maxLength: 255 })),
      password: Type.Optional(Secret({ maxLength: 1024 })),
      token: Type.Optional(Secret({ minLength: 1, maxLength: 4096 })),
    },
    { additionalProperties: false },
  ),
  example: {
    metadata: {
      serverUrl: 'nats://127.0.0.1:4222',
      subjectTemplate: 'ferry.{action}.{objectName}',
      stream: 'FERRY',
    },
  },
  check(metadata, secrets) {
    const issues: ProblemIssue[] = serverUrlIssues(metadata.serverUrl, ['nats', 'tls']);
    const template = templateProblem(metadata.subjectTemplate);
    if (template) issues.push({ in: 'body', name: 'metadata.subjectTemplate', detail: template });
    else if (/[\s*>]|^\.|\.$|\.\./.test(metadata.subjectTemplate.replace(/\{[^}]*\}/g, 'x'))) {
      issues.push({
        in: 'body',
        name: 'metadata.subjectTemplate',
        detail: 'a subject is dot-separated tokens without spaces or wildcards',
      });
    }
    if (secrets.password !== undefined && secrets.username === undefined) {
      issues.push({
        in: 'body',
        name: 'secrets.username',
        detail: 'secrets.password needs secrets.username',
      });
    }
    return issues;
  },
  describe(metadata) {
    try {
      const url = new URL(metadata.serverUrl);
      return `${url.protocol}//${url.host} subject ${metadata.subjectTemplate}`;
    } catch {
      return `subject ${metadata.subjectTemplate}`;
    }
  },
  async send(target, message, options) {
    const startedAt = Date.now();
    let link: Link | undefined;
    try {
      link = await withDeadline(
        linkFor(target, options.timeoutMs, options.policy.allowPrivate),
        options.timeoutMs,
        'connecting to NATS',
      );
      const subject = fillTemplate(target.metadata.subjectTemplate, message.body, cleanToken);
      const content = typeof message.body === 'string' ? Buffer.from(message.body, 'utf8') : message.body;
      const extra = natsHeaders();
      extra.set('Content-Type', 'application/json');
      const ack = await withDeadline(
        link.js.publish(subject, content, {
          msgID: message.messageId,
          timeout: options.timeoutMs,
          headers: extra,
          ...(target.metadata.stream && { expect: { streamName: target.metadata.stream } }),
        }),
        options.timeoutMs + 1000,
        'waiting for the JetStream ack',
      );
      return acceptedSend(
        startedAt,
        `subject ${subject}: stream ${ack.stream} seq ${ack.seq}${ack.duplicate ? ' (a duplicate: already stored)' : ''}`,
      );
    } catch (error) {
      if (error instanceof SendTimeout) return failedSend(startedAt, error.message, true, 'timeout');
      if (error instanceof DestinationUrlError) {
        return failedSend(startedAt, error.message, error.code === 'unresolvable', 'refused');
      }
      const reason = shortReason(error);
      if (PERMANENT.test(reason)) return failedSend(startedAt, `NATS refused: ${reason}`, false, 'status');
      // No connection, no stream for the subject yet (no responders), a timeout: try again later.
      return failedSend(startedAt, `NATS: ${reason}`, true, 'network');
    }
  },
  async close() {
    const open = [...links.values()];
    links.clear();
    await Promise.all(open.map((link) => link.then((l) => l.connection.close()).catch(() => {})));
  },
};
