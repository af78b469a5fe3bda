import type { EntityManager } from '@mikro-orm/postgresql';
import type { ReadCheckpoint } from '../../db/entities/read-checkpoint.js';
import { em as newEntityManager } from '../../db/orm.js';
import type { DeliveryResult } from '../../delivery/deliver.js';
import { messageIdFor } from '../../delivery/messages.js';
import {
  beginAttempts,
  recordAttempts,
  recordFailedAttempt,
  type DeliverySettings,
  sendMessage,
  type AttemptRecord,
  type DeliveryAttemptInput,
  type DeliveryAttemptResult,
  type OpenDestination,
} from '../destination-delivery.js';
import { appendLogs, type LogEntry } from '../operation-logs.js';
import type { CheckpointWriter } from './checkpoint-writer.js';
import type { ShapedPage } from './page-feed.js';
import type { ReadPlan } from './plan.js';

/**
 * A read's messages on their way to its destination: at most FERRY_DELIVERY_CONCURRENCY at once,
 * their outcomes taken oldest first, so the checkpoint only ever moves past pages whose every
 * message was accepted. A page goes to the checkpoint writer once its last message is accepted; a
 * page with nothing to send (stored on request, empty, or delivered by an earlier run) once the
 * pages before it are.
 *
 * A refused message stops delivery: `deliver` and `settle` throw `MessageRefused`, and `fail`
 * records what happened for the retry.
 */

/** A message on its way to the destination. */
interface InFlight {
  page: ShapedPage;
  part: number;
  /** The page's last message: once it is accepted, the page is delivered. */
  last: boolean;
  input: DeliveryAttemptInput;
  time: Date;
  /** The attempt's row, recorded pending before the message was sent. */
  ledgerId: string;
  result: Promise<DeliveryResult>;
}

/** The destination did not accept a message; nothing after it is checkpointed. */
export class MessageRefused extends Error {
  override readonly name = 'MessageRefused';

  constructor(
    readonly sent: InFlight,
    readonly result: DeliveryResult,
  ) {
    super(result.error ?? 'delivery failed');
  }

  /** The page the read resumes at. */
  get pageIndex(): number {
    return this.sent.page.pageIndex;
  }
}

function attemptOf(sent: InFlight, result: DeliveryResult): AttemptRecord {
  return { input: sent.input, result, time: sent.time, ledgerId: sent.ledgerId };
}

export class DeliveryWindow {
  /** Pages handed to the checkpoint writer. */
  pagesRead = 0;
  readonly #inFlight: InFlight[] = [];
  readonly #size: number;
  /** The read's own entity manager for the ledger: its pages begin one after the other. */
  #em: EntityManager | undefined;

  constructor(
    private readonly checkpoint: ReadCheckpoint,
    private readonly plan: ReadPlan,
    private readonly writer: CheckpointWriter,
    private readonly settings: DeliverySettings,
    /** Absent on request: pages are stored with the checkpoint, not sent. */
    private readonly destination: OpenDestination | undefined,
    /** Called as messages are answered and pages go by, so the activity can prove it is alive. */
    private readonly heartbeat: () => void = () => {},
  ) {
    this.#size = destination ? settings.delivery.concurrency : 1;
  }

  /** Sends the page's messages the checkpoint does not record as delivered, waiting for room. */
  async deliver(page: ShapedPage): Promise<void> {
    const { destination } = this;
    // Only the checkpoint's own page can have been delivered in part, by an earlier run.
    const first = page.pageIndex === this.checkpoint.pageIndex ? this.checkpoint.partsDelivered : 0;
    if (!destination || first >= page.parts.length) {
      await this.settle();
      this.#advance(page);
      this.heartbeat();
      return;
    }
    const inputs: DeliveryAttemptInput[] = [];
    for (let part = first; part < page.parts.length; part++) {
      inputs.push({
        projectId: this.plan.projectId,
        destinationId: this.plan.destinationId,
        messageId: messageIdFor(this.checkpoint.operationId, page.pageIndex, part),
        body: page.parts[part].body,
        kind: 'record',
        operationId: this.checkpoint.operationId,
        createdAt: new Date(this.plan.context.operationTime),
      });
    }
    // The page's attempts are in the ledger before any of them is sent (one statement per page), so
    // a worker that dies before the checkpoint still leaves them there, pending.
    const time = new Date();
    const ledgerIds = await beginAttempts((this.#em ??= await newEntityManager()), inputs, time);
    for (const [offset, input] of inputs.entries()) {
      while (this.#inFlight.length >= this.#size) await this.#settleOldest();
      const part = first + offset;
      this.#inFlight.push({
        page,
        part,
        last: part === page.parts.length - 1,
        input,
        time,
        ledgerId: ledgerIds[offset],
        result: sendMessage(destination, input, this.settings),
      });
    }
  }

  /** Waits for every message in flight; the pages they complete go to the checkpoint writer. */
  async settle(): Promise<void> {
    while (this.#inFlight.length) await this.#settleOldest();
  }

  /**
   * After `MessageRefused`: records the refused attempt, with the accepted parts of its page so the
   * retry resumes after them, and says what the destination answered. Messages sent after it are
   * awaited and their attempts completed in the ledger; they are sent again, under the same ids, on
   * retry.
   */
  async fail(refused: MessageRefused): Promise<DeliveryAttemptResult> {
    const { sent, result } = refused;
    const alsoRefused: AttemptRecord[] = [];
    for (const other of this.#inFlight.splice(0)) {
      const otherResult = await other.result;
      if (otherResult.ok) this.writer.attempt(attemptOf(other, otherResult));
      else alsoRefused.push(attemptOf(other, otherResult));
    }
    await this.writer.flush();
    const failure = await recordFailedAttempt(attemptOf(sent, result), this.settings);
    await this.#recordPartialPage(sent, failure, [...this.writer.takeAttempts(), ...alsoRefused]);
    return failure;
  }

  async #settleOldest(): Promise<void> {
    const sent = this.#inFlight.shift()!;
    const result = await sent.result;
    this.heartbeat();
    if (!result.ok) throw new MessageRefused(sent, result);
    this.writer.attempt(attemptOf(sent, result));
    if (sent.last) this.#advance(sent.page);
  }

  #advance(page: ShapedPage): void {
    this.writer.advance(page);
    this.pagesRead++;
  }

  /** Keeps the delivered parts of a page that failed part-way, with what happened, for the retry. */
  async #recordPartialPage(
    refused: InFlight,
    failure: DeliveryAttemptResult,
    answered: readonly AttemptRecord[],
  ): Promise<void> {
    const { checkpoint, plan } = this;
    const { page } = refused;
    const where = `Delivery of page ${page.pageIndex + 1} to destination "${plan.destinationName}" failed`;
    const warning: LogEntry = {
      severity: failure.retryable ? 'WARN' : 'ERROR',
      msg: failure.retryable
        ? `${where}; it will be retried.`
        : `${where}${failure.disabled ? ': the destination is disabled' : ''}.`,
      error: failure.error,
      details: {
        messageId: refused.input.messageId,
        destinationId: plan.destinationId,
        ...(failure.status !== undefined && { status: failure.status }),
      },
    };
    const em = await newEntityManager();
    await em.transactional(async (tx) => {
      await tx.execute(
        `update read_checkpoints set parts_delivered = greatest(parts_delivered, ?), update_time = now()
         where operation_id = ? and page_index = ?`,
        [refused.part, checkpoint.operationId, page.pageIndex],
        'run',
      );
      await recordAttempts(tx, answered);
      appendLogs(tx, checkpoint.projectId, checkpoint.operationId, [...page.logs, warning]);
    });
  }
}
