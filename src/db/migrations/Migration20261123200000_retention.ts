import { Migration } from '@mikro-orm/migrations';

/**
 * Retention deletes by age, oldest first, resuming each batch after the last row it deleted: an
 * index on (time written, key) per table. Every column indexed here is set once, so updates of the
 * rows (a checkpoint moving, an operation's progress) stay HOT and the writers pay one index insert.
 * The partial index of operations in progress changes only when an operation starts or ends.
 * `if not exists`, so an operator may build them beforehand with `create index concurrently` on a
 * large database (see the README).
 */
export class Migration20261123200000_retention extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create index if not exists operation_logs_age on operation_logs (timestamp, id);
      create index if not exists delivery_attempts_age on delivery_attempts (create_time, id);
      create index if not exists stored_pages_age on stored_pages (create_time, id);
      create index if not exists read_checkpoints_age on read_checkpoints (create_time, operation_id);
      create index if not exists subscription_events_age on subscription_events (create_time, id);
      create index if not exists operations_age on operations (create_time, id);
      -- The few operations in progress, which keep their logs, checkpoints, pages and change events.
      create index if not exists operations_in_progress on operations (id) where status = 'in_progress';
    `);
  }
}
