import { em as newEntityManager } from '../../db/orm.js';
import type { WriteOutcome } from '../../temporal/contracts/write.js';

/**
 * Which creates of an asynchronous write were sent, for providers that keep no idempotency key: a
 * create is marked sent (committed) before it leaves, and its outcome is kept once known. A retried
 * activity (its worker died, or lost its answer) that finds the create sent with an outcome reports
 * that outcome; one sent without an outcome may have been written, and is reported so rather than
 * sent again, because sending it again could create the record twice.
 */

/** What an earlier attempt at the same create left behind. */
export type EarlierSend = { outcome: WriteOutcome } | { sentTime: Date };

interface Create {
  operationId: string;
  projectId: string;
  index: number;
}

/** Marks the create sent; answers what an earlier attempt left instead when there was one. */
export async function markCreateSent(create: Create): Promise<EarlierSend | undefined> {
  const em = await newEntityManager();
  const marked = await em.execute<{ marked: number }[]>(
    `insert into write_record_sends (operation_id, record_index, project_id) values (?, ?, ?)
     on conflict (operation_id, record_index) do nothing
     returning 1 as marked`,
    [create.operationId, create.index, create.projectId],
  );
  if (marked.length) return undefined;
  const [earlier] = await em.execute<{ outcome: WriteOutcome | null; sent_time: Date }[]>(
    'select outcome, sent_time from write_record_sends where operation_id = ? and record_index = ?',
    [create.operationId, create.index],
  );
  return earlier.outcome ? { outcome: earlier.outcome } : { sentTime: new Date(earlier.sent_time) };
}

/** Keeps the outcome of a create marked sent. */
export async function recordSendOutcome(create: Create, outcome: WriteOutcome): Promise<void> {
  await (
    await newEntityManager()
  ).execute(
    'update write_record_sends set outcome = ? where operation_id = ? and record_index = ?',
    [JSON.stringify(outcome), create.operationId, create.index],
    'run',
  );
}

/** The provider surely did not apply the create (it answered 429): it may be sent again. */
export async function forgetSend(create: Create): Promise<void> {
  await (
    await newEntityManager()
  ).execute(
    'delete from write_record_sends where operation_id = ? and record_index = ? and outcome is null',
    [create.operationId, create.index],
    'run',
  );
}

/** The failure reported for a create sent by an attempt that never recorded what the provider answered. */
export function mayHaveBeenWritten(provider: string, sentTime: Date): string {
  return (
    `This record may have been written: Ferry sent the create to "${provider}" at ${sentTime.toISOString()} ` +
    'and stopped before recording the answer. It was not sent again, because the provider keeps no ' +
    'idempotency key and a second create could duplicate it; check the provider for it before writing it again.'
  );
}
