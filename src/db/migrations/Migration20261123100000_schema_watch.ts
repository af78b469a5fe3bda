import { Migration } from '@mikro-orm/migrations';

/**
 * watchSchema: the last field metadata seen of each installed read object (`schema_snapshots`), and
 * the `schema.watch` messages a run found to send (`schema_watch_messages`), written in the same
 * transaction as the new snapshot so a change is recorded once and delivered durably from its row.
 */
export class Migration20261123100000_schema_watch extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table schema_snapshots (
        installation_id uuid not null,
        object_name text not null,
        fields jsonb not null,
        taken_at timestamptz not null,
        primary key (installation_id, object_name)
      );
      create table schema_watch_messages (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade deferrable initially deferred,
        installation_id uuid not null,
        operation_id uuid not null,
        object_name text not null,
        message text not null,
        create_time timestamptz not null default now()
      );
      create index schema_watch_messages_operation on schema_watch_messages (operation_id);
    `);
  }
}
