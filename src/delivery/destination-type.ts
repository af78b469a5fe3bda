import type { TObject } from 'typebox';
import type { ProblemIssue } from '../core/problem.js';
import type { DeliveryResult } from './deliver.js';
import type { DestinationPolicy } from './url-guard.js';

/**
 * What a destination type is: its public settings (`metadata`) and credentials (`secrets`) as
 * TypeBox schemas, so the API validates them, the OpenAPI document shows them and the console draws
 * their forms from one declaration; how it sends one message; and what the message id becomes on
 * the far side. One module per type under src/delivery/types/, registered in registry.ts. Nothing
 * type-specific lives outside its module: the API, the attempts ledger, retries and disabling treat
 * every type alike.
 */

/** One message on its way: exactly the JSON a webhook receives, and its stable id. */
export interface OutgoingMessage {
  /** Stable across attempts of the same message, so the far side can drop a redelivery. */
  messageId: string;
  /** The JSON body, text or its UTF-8 bytes; the same bytes for every type. */
  body: string | Buffer;
  /** The attempt's time (the webhook signs with it). */
  timestamp?: Date;
  /**
   * When the message was first made (its read's operation time, its event's time): the same on
   * every attempt, so a key built from it (S3's default) is the same on a redelivery. Absent when
   * the caller does not know it.
   */
  createdAt?: Date;
}

/** A destination ready to send to: its settings and decrypted credentials. */
export interface DestinationTarget<M = Record<string, unknown>, S = Record<string, unknown>> {
  destinationId: string;
  /**
   * Changes whenever the destination's settings or credentials change: a type that keeps a client
   * or connection per destination keys it by `destinationId` and `version`, and reconnects when
   * the version moves.
   */
  version: string;
  metadata: M;
  secrets: S;
}

export interface SendOptions {
  /** The whole attempt, connecting and waiting for the far side's acknowledgement included. */
  timeoutMs: number;
  /** Whether private and loopback addresses may be reached (FERRY_ALLOW_PRIVATE_DESTINATIONS). */
  policy: DestinationPolicy;
  /** Ferry's public URL (FERRY_PUBLIC_API_URL), for messages that link back to it; none without. */
  publicApiUrl?: string;
}

/**
 * The result of one attempt is the webhook's `DeliveryResult`: `ok`, `retryable`, `failure`, an
 * `error` that never holds credentials, and `responseBody`, which the attempts ledger keeps: a type
 * puts there where the message went (queue and routing key, object key, stream and sequence).
 * `status` is an HTTP status and only HTTP types set it; `gone` disables the destination at once.
 */
export type SendResult = DeliveryResult;

export interface DestinationType<M = Record<string, unknown>, S = Record<string, unknown>> {
  /** The `type` value in the API, e.g. `rabbitmq`. */
  readonly type: string;
  /** One line for the OpenAPI document and the console. */
  readonly title: string;
  /** What Ferry's message id becomes on the far side, for the docs (e.g. "the AMQP messageId property"). */
  readonly messageIdOnFarSide: string;
  /**
   * The public `metadata` object as given to create (required fields required, defaults declared).
   * Use `additionalProperties: false`: an unknown field is a 400 naming it.
   */
  readonly metadata: TObject;
  /** The public `secrets` object; every property `Secret(...)` (writeOnly). Strict as `metadata`. */
  readonly secrets: TObject;
  /** Example metadata and secrets for the OpenAPI document. */
  readonly example: { metadata: Record<string, unknown>; secrets?: Record<string, unknown> };
  /**
   * Checks beyond the schema (a URL's scheme, a template's syntax), after the schema passed. Issue
   * names are `metadata.<field>` or `secrets.<field>`; the API prefixes them as the request needs.
   * Never connects: an unreachable server at create time is not an error (it may come up later).
   */
  check?(metadata: M, secrets: S, policy: DestinationPolicy): ProblemIssue[] | Promise<ProblemIssue[]>;
  /**
   * Where messages go, without credentials or query strings (`amqp://host:5672 exchange ferry`):
   * shown in events such as `destination.disabled` and in logs.
   */
  describe(metadata: M): string;
  /**
   * The settings as a read without `includeSecrets=true` shows them, where a setting is a credential
   * in effect (a Slack webhook URL's path is its token). Absent: shown as stored.
   */
  redact?(metadata: M): M;
  /**
   * Sends one message and waits for the far side to take responsibility for it (publisher confirm,
   * stream ack, committed row, 2xx). Never throws for a failed delivery: it answers `ok: false`
   * with `retryable` saying whether another attempt may succeed (a connection refused, a timeout
   * or a throttled server: yes; a missing exchange, bad credentials or a refused body: no).
   */
  send(target: DestinationTarget<M, S>, message: OutgoingMessage, options: SendOptions): Promise<SendResult>;
  /** Closes the clients and connections the type keeps (worker shutdown, tests). */
  close?(): Promise<void>;
}

/** A failed attempt, for types that do not speak HTTP. */
export function failedSend(
  startedAt: number,
  error: string,
  retryable: boolean,
  failure: SendResult['failure'] = 'network',
): SendResult {
  return {
    ok: false,
    durationMs: Date.now() - startedAt,
    responseBody: '',
    retryable,
    gone: false,
    failure,
    error,
  };
}

/** An accepted message; `where` goes to the attempts ledger. */
export function acceptedSend(startedAt: number, where: string): SendResult {
  return { ok: true, durationMs: Date.now() - startedAt, responseBody: where, retryable: false, gone: false };
}

/** Rejects after `ms` with a timeout error, for types whose client has no deadline of its own. */
export async function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new SendTimeout(`${what}: no answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

export class SendTimeout extends Error {
  override readonly name = 'SendTimeout';
}
