import { Migration } from '@mikro-orm/migrations';

/**
 * Repair marks: a request about to change an installation in both PostgreSQL and Temporal commits a
 * mark first and holds a session advisory lock on it until its change is complete. A mark that is
 * present but unlocked belongs to a request that died (or failed) midway, and the workers repair its
 * installation (and operation) within seconds. No foreign keys: a mark may name an installation
 * that was never committed, which is exactly what needs checking.
 */
export class Migration20261124000000_repair_marks extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table repair_marks (
        id uuid primary key,
        project_id uuid not null,
        installation_id uuid not null,
        operation_id uuid,
        reason text not null,
        create_time timestamptz not null default now()
      );
      create index repair_marks_create_time on repair_marks (create_time);
    `);
  }
}
