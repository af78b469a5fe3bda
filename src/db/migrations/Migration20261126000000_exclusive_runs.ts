import { Migration } from '@mikro-orm/migrations';

/**
 * The last run of work one process at a time does (the repair loop's full pass): when it ended and
 * how long it took, so that the next run, in whichever process, keeps the work to its share of the
 * time (`src/db/advisory-lock.ts`).
 */
export class Migration20261126000000_exclusive_runs extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table exclusive_runs (
        name text primary key,
        finished_at timestamptz not null,
        duration_ms integer not null
      );
    `);
  }
}
