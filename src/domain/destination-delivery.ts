import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config.js';
import { isUuid } from '../core/ids.js';
import { DestinationEntity, type Destination } from '../db/entities/operation.js';
import { em as newEntityManager } from '../db/orm.js';
import type { DeliveryResult } from '../delivery/deliver.js';
import {
  deliverSingleMessage,
  type DestinationLedger,
  type SingleMessageOutcome,
  type SingleMessageResult,
} from '../delivery/single-message.js';
import type { DestinationTarget } from '../delivery/destination-type.js';
import type { AnyDestinationType } from '../delivery/registry.js';
import { shouldDisable } from '../core/retry-schedule.js';
import type { DestinationPolicy } from '../delivery/url-guard.js';
import { deliveryAttempts } from '../metrics.js';
import { recordEvent } from './events.js';
import { destinationPolicy, destinationTarget, openSecrets } from './destinations.js';
import { typeOf } from './typed-destinations.js';

/**
 * One attempt to deliver one message to one destination, for record pages and notification events
 * alike: load the destination, sign with every valid secret, send, record the attempt, and keep the
 * destination's health (first failure time, disabling on 410 or after failing for too long).
 * Callers own retries: the result says whether another attempt may succeed.
 *
 * Every attempt is in the ledger before its message leaves (`beginAttempts` records it `pending`),
 * and is completed with the answer afterwards, so a process that dies between sending and recording
 * still leaves the attempt behind, pending: sent, answer unknown.
 *
 * `attemptDelivery` does all of it for one message. A read sending many messages to one destination
 * opens it once (`openDestination`), begins the attempts of each page in one statement, sends each
 * message (`sendMessage`), and completes its successful attempts in batches with its checkpoint
 * (`recordAttempts`); failures are recorded at once (`recordFailedAttempt`), events and all.
 */

export interface DeliveryAttemptInput {
  projectId: string;
  destinationId: string;
  /** Stable across attempts of the same message (`messageIdFor`, `notificationMessageId`). */
  messageId: string;
  /** The exact JSON to sign and send: text, or its UTF-8 bytes. */
  body: string | Buffer;
  kind: 'record' | 'notification';
  operationId?: string;
  /** When the message was first made, the same on every attempt (`OutgoingMessage.createdAt`). */
  createdAt?: Date;
}

/** What one attempt answered (src/delivery/single-message.ts). */
export type DeliveryAttemptResult = SingleMessageResult;

/**
 * What delivery is configured with (FERRY_DELIVERY_*, FERRY_ALLOW_PRIVATE_DESTINATIONS, the public
 * API URL links point at), handed down from the entry point: an activity, the API, the CLI.
 */
export type DeliverySettings = Pick<Config, 'allowPrivateDestinations' | 'publicApiUrl' | 'delivery'>;

export interface DeliveryAttemptOptions {
  /** Overrides the settings' FERRY_ALLOW_PRIVATE_DESTINATIONS for this attempt (tests of the SSRF guard). */
  policy?: DestinationPolicy;
  timeoutMs?: number;
  /** The clock; tests move it to reach the disable-after period. */
  now?: () => Date;
}

/** A destination ready to send to: its type, and its settings with the secrets valid when it was opened. */
export interface OpenDestination {
  destination: Destination;
  type: AnyDestinationType;
  target: DestinationTarget;
}

/** One attempt, as `recordAttempts` records it. */
export interface AttemptRecord {
  input: DeliveryAttemptInput;
  result: DeliveryResult;
  time: Date;
  /** The ledger row `beginAttempts` recorded pending; absent, the attempt is inserted whole. */
  ledgerId?: string;
}

const ERROR_LIMIT = 1000;

/** The fields every destination event carries (COMPAT.md: `destinationId, destinationName, url`). */
export function destinationEventData(destination: Destination): Record<string, unknown> {
  return {
    // The public DestinationWebhookDisabledData requires it.
    projectId: destination.projectId,
    destinationId: destination.id,
    destinationName: destination.name,
    // For a webhook its URL; for other types where messages go (`describe`), never credentials.
    url: typeOf(destination).describe(
      destination.type === 'webhook' ? { url: destination.url } : destination.metadata,
    ),
  };
}

/**
 * Loads and decrypts a destination, or says why nothing may be sent to it (gone, or disabled).
 */
export async function openDestination(
  projectId: string,
  destinationId: string,
  now = new Date(),
): Promise<OpenDestination | DeliveryAttemptResult> {
  const em = await newEntityManager();
  // An operation whose metadata lost its destination's id names none: gone, as a deleted one is.
  const destination = isUuid(destinationId)
    ? await em.findOne(DestinationEntity, { id: destinationId, projectId })
    : null;
  if (!destination) {
    return { delivered: false, retryable: false, disabled: false, error: 'the destination no longer exists' };
  }
  if (destination.disabledTime) {
    return {
      delivered: false,
      retryable: false,
      disabled: true,
      error: `destination "${destination.name}" is disabled`,
    };
  }
  return openForSending(destination, now);
}

/** A destination ready to send to, with the secrets valid at `now`, whatever its state. */
export function openForSending(destination: Destination, now = new Date()): OpenDestination {
  return {
    destination,
    type: typeOf(destination),
    target: destinationTarget(destination, openSecrets(destination), now),
  };
}

export function isOpen(value: OpenDestination | DeliveryAttemptResult): value is OpenDestination {
  return 'destination' in value;
}

/** Sends one message through the destination's type; never throws for a failed delivery. */
export async function sendMessage(
  open: OpenDestination,
  input: Pick<DeliveryAttemptInput, 'messageId' | 'body' | 'createdAt'>,
  settings: DeliverySettings,
  options: DeliveryAttemptOptions = {},
): Promise<DeliveryResult> {
  const startedAt = Date.now();
  try {
    return await open.type.send(
      open.target,
      {
        messageId: input.messageId,
        body: input.body,
        ...(input.createdAt && { createdAt: input.createdAt }),
      },
      {
        timeoutMs: options.timeoutMs ?? settings.delivery.timeoutMs,
        policy: options.policy ?? destinationPolicy(settings),
        publicApiUrl: settings.publicApiUrl,
      },
    );
  } catch (error) {
    // A type that threw broke its promise; the attempt is still recorded, and tried again later.
    return {
      ok: false,
      durationMs: Date.now() - startedAt,
      responseBody: '',
      retryable: true,
      gone: false,
      failure: 'network',
      error: `the ${open.destination.type} destination failed unexpectedly (${(error as Error).name})`,
    };
  }
}

/** Numbers each new row after the earlier attempts of the same message to the same destination. */
const ATTEMPT_NUMBER = `row_number() over (partition by v.destination_id, v.message_id order by v.create_time)
                 + coalesce((select max(a.attempt) from delivery_attempts a
                             where a.destination_id = v.destination_id and a.message_id = v.message_id), 0)`;

/**
 * Records attempts about to be sent, `pending`, in one statement, and answers their ledger ids in
 * the order given. Run it before sending: an attempt whose process dies before the answer is
 * recorded stays in the ledger as pending.
 */
export async function beginAttempts(
  em: EntityManager,
  inputs: readonly DeliveryAttemptInput[],
  time: Date,
): Promise<string[]> {
  if (!inputs.length) return [];
  const rows = inputs.map(
    (_, index) => `(?::uuid, ?::uuid, ?::text, ?::text, ?::uuid, ?::timestamptz, ${index}::integer)`,
  );
  const params = inputs.flatMap((input) => [
    input.projectId,
    input.destinationId,
    input.messageId,
    input.kind,
    input.operationId ?? null,
    time,
  ]);
  const inserted = await em.execute<{ id: string; position: number }[]>(
    `with v (project_id, destination_id, message_id, kind, operation_id, create_time, position) as (
       values ${rows.join(', ')}
     ), numbered as (
       select v.*, ${ATTEMPT_NUMBER} as attempt from v
     ), inserted as (
       insert into delivery_attempts
         (project_id, destination_id, message_id, kind, operation_id, delivered, pending, duration_ms,
          create_time, attempt)
       select project_id, destination_id, message_id, kind, operation_id, false, true, 0, create_time, attempt
         from numbered order by position
       returning id, destination_id, message_id
     )
     select inserted.id::text as id, numbered.position from inserted
       join numbered on numbered.destination_id = inserted.destination_id
                    and numbered.message_id = inserted.message_id`,
    params,
  );
  const ids: string[] = new Array<string>(inputs.length);
  for (const row of inserted) ids[row.position] = row.id;
  return ids;
}

/**
 * Records attempts with their answers: completes those begun (`beginAttempts`) in one statement and
 * inserts the others in another, numbered after the earlier attempts of the same message to the same
 * destination. Runs in the caller's transaction when given one. Every attempt is counted here
 * (`ferry_delivery_attempts_total`), whichever path recorded it.
 */
export async function recordAttempts(em: EntityManager, attempts: readonly AttemptRecord[]): Promise<void> {
  if (!attempts.length) return;
  const begun = attempts.filter((attempt) => attempt.ledgerId !== undefined);
  const whole = attempts.filter((attempt) => attempt.ledgerId === undefined);
  if (begun.length) {
    const answers = completedAnswers(begun);
    await em.execute(
      `update delivery_attempts a ${answers.set} from ${answers.from} where a.id = v.id`,
      answers.params,
      'run',
    );
  }
  if (whole.length) await insertAttempts(em, whole);
  countAttempts(attempts);
}

/** Counts recorded attempts by outcome (`ferry_delivery_attempts_total`). */
export function countAttempts(attempts: readonly AttemptRecord[]): void {
  for (const { input, result } of attempts) {
    deliveryAttempts.inc({ kind: input.kind, outcome: result.ok ? 'delivered' : 'failed' });
  }
}

function answerParams({ result }: AttemptRecord): unknown[] {
  return [
    result.ok,
    result.status ?? null,
    Math.round(result.durationMs),
    result.responseBody || null,
    result.error?.slice(0, ERROR_LIMIT) ?? null,
  ];
}

/**
 * The parts of an `update delivery_attempts a … where a.id = v.id` that completes begun attempts
 * with their answers: its `set`, the `from` list of answers (`v`), and their parameters. A caller
 * may fold it into a statement of its own (the read's checkpoint), adding to `from`.
 */
export function completedAnswers(attempts: readonly AttemptRecord[]): {
  set: string;
  from: string;
  params: unknown[];
} {
  const rows = attempts.map(() => '(?::bigint, ?::boolean, ?::integer, ?::integer, ?::text, ?::text)');
  return {
    set: `set pending = false, delivered = v.delivered, status = v.status, duration_ms = v.duration_ms,
              response_body = v.response_body, error = v.error`,
    from: `(values ${rows.join(', ')}) as v (id, delivered, status, duration_ms, response_body, error)`,
    params: attempts.flatMap((attempt) => [attempt.ledgerId, ...answerParams(attempt)]),
  };
}

async function insertAttempts(em: EntityManager, attempts: readonly AttemptRecord[]): Promise<void> {
  const rows = attempts.map(
    () =>
      '(?::uuid, ?::uuid, ?::text, ?::text, ?::uuid, ?::boolean, ?::integer, ?::integer, ?::text, ?::text, ?::timestamptz)',
  );
  const params = attempts.flatMap((attempt) => {
    const { input, time } = attempt;
    const [delivered, ...rest] = answerParams(attempt);
    return [
      input.projectId,
      input.destinationId,
      input.messageId,
      input.kind,
      input.operationId ?? null,
      delivered,
      ...rest,
      time,
    ];
  });
  await em.execute(
    `insert into delivery_attempts
       (project_id, destination_id, message_id, kind, operation_id, delivered, status, duration_ms,
        response_body, error, create_time, attempt)
     select v.*, ${ATTEMPT_NUMBER}
     from (values ${rows.join(', ')})
       as v (project_id, destination_id, message_id, kind, operation_id, delivered, status, duration_ms,
             response_body, error, create_time)`,
    params,
    'run',
  );
}

/** A destination that failed before and now accepted a message is healthy again. */
export async function clearFailures(em: EntityManager, destinationId: string): Promise<void> {
  await em.execute(
    'update destinations set first_failure_time = null where id = ? and first_failure_time is not null',
    [destinationId],
    'run',
  );
}

/**
 * Records a failed attempt under a row lock, so concurrent failures agree on the first failure time
 * and only one of them disables the destination and says so. Emits `destination.delivery.error`,
 * and `destination.webhook.disabled` when this failure disables it.
 */
export async function recordFailedAttempt(
  attempt: AttemptRecord,
  settings: Pick<DeliverySettings, 'delivery'>,
): Promise<DeliveryAttemptResult> {
  const { input, result, time } = attempt;
  const em = await newEntityManager();
  const disabled = await em.transactional(async (tx) => {
    await recordAttempts(tx, [attempt]);
    const destination = await tx.findOne(
      DestinationEntity,
      { id: input.destinationId },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    if (!destination) return false;
    destination.firstFailureTime ??= time;
    recordEvent(tx, input.projectId, 'destination.delivery.error', {
      ...destinationEventData(destination),
      messageId: input.messageId,
      ...(result.status !== undefined && { status: result.status }),
      error: result.error ?? 'delivery failed',
      kind: input.kind,
      ...(input.operationId && { operationId: input.operationId }),
    });
    if (destination.disabledTime) return true;
    const disable = shouldDisable({
      firstFailureAt: destination.firstFailureTime,
      now: time,
      disableAfterMs: settings.delivery.disableAfterMs,
      gone: result.gone,
    });
    if (disable) {
      destination.disabledTime = time;
      // The public API's event keeps its name for every type; `destination.disabled` (Ferry's own)
      // says the same with the destination's type and why.
      recordEvent(tx, input.projectId, 'destination.webhook.disabled', destinationEventData(destination));
      recordEvent(tx, input.projectId, 'destination.disabled', {
        ...destinationEventData(destination),
        type: destination.type,
        reason: result.gone ? 'gone' : 'failing',
        error: result.error ?? 'delivery failed',
      });
    }
    return disable;
  });
  return {
    delivered: false,
    retryable: result.retryable && !disabled,
    ...(result.retryAfterMs !== undefined && { retryAfterMs: result.retryAfterMs }),
    disabled,
    ...(result.status !== undefined && { status: result.status }),
    error: result.error ?? 'delivery failed',
  };
}

/**
 * One attempt of one message, through the delivery floor's single path (`deliverSingleMessage`):
 * with `attempt`, a retryable failure says when to try again on the delivery retry schedule.
 */
export async function attemptDelivery(
  input: DeliveryAttemptInput,
  settings: DeliverySettings,
  options: DeliveryAttemptOptions & { attempt?: number } = {},
): Promise<SingleMessageOutcome> {
  const em = await newEntityManager();
  const ledger: DestinationLedger<OpenDestination> = {
    open: async (time) => {
      const open = await openDestination(input.projectId, input.destinationId, time);
      return isOpen(open) ? { open } : { refused: open };
    },
    begin: async (time) => (await beginAttempts(em, [input], time))[0],
    send: (open) => sendMessage(open, input, settings, options),
    delivered: async (open, result, time, ledgerId) => {
      await recordAttempts(em, [{ input, result, time, ledgerId }]);
      if (open.destination.firstFailureTime) await clearFailures(em, open.destination.id);
    },
    failed: (result, time, ledgerId) => recordFailedAttempt({ input, result, time, ledgerId }, settings),
  };
  return deliverSingleMessage(ledger, {
    ...(options.attempt !== undefined && { attempt: options.attempt }),
    retryScheduleMs: settings.delivery.retryScheduleMs,
    time: options.now?.() ?? new Date(),
  });
}
