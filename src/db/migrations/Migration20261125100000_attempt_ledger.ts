import { Migration } from '@mikro-orm/migrations';

/**
 * The attempt ledgers survive a crash between sending and recording:
 * - a delivery attempt is recorded `pending` before its message is sent, and completed with the
 *   receiver's answer afterwards; one left pending is an attempt whose answer no one heard (the
 *   worker died), which is exactly what the ledger must still show;
 * - a create of an asynchronous write is marked sent before it goes to a provider that keeps no
 *   idempotency key, with its outcome once known, so a retried activity that finds a create sent
 *   but never answered reports "may have been written" instead of creating the record twice.
 */
export class Migration20261125100000_attempt_ledger extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table delivery_attempts add column pending boolean not null default false;
      create table write_record_sends (
        operation_id uuid not null references operations(id) on delete cascade deferrable initially deferred,
        record_index integer not null,
        project_id uuid not null,
        sent_time timestamptz not null default now(),
        outcome jsonb,
        primary key (operation_id, record_index)
      );
    `);
  }
}
