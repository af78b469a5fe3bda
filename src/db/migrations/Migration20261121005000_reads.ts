import { Migration } from '@mikro-orm/migrations';

/**
 * The read pipeline's own tables: every delivery attempt, the resumable cursor of each read, and
 * pages kept for `delivery.mode: onRequest` with the page credit their receivers granted.
 */
export class Migration20261121005000_reads extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table delivery_attempts (
        id bigserial primary key,
        project_id uuid not null references projects(id) on delete cascade deferrable initially deferred,
        destination_id uuid not null references destinations(id) on delete cascade deferrable initially deferred,
        message_id text not null,
        attempt integer not null,
        kind text not null,
        operation_id uuid,
        delivered boolean not null,
        status integer,
        duration_ms integer not null,
        response_body text,
        error text,
        create_time timestamptz not null default now()
      );
      create index delivery_attempts_destination on delivery_attempts(destination_id, id desc);
      create index delivery_attempts_message on delivery_attempts(destination_id, message_id);
      create index delivery_attempts_operation on delivery_attempts(operation_id) where operation_id is not null;
      create table read_checkpoints (
        operation_id uuid primary key references operations(id) on delete cascade deferrable initially deferred,
        project_id uuid not null,
        installation_id uuid not null,
        object_name text not null,
        plan jsonb not null,
        page_index integer not null default 0,
        page_token text,
        parts_delivered integer not null default 0,
        records_processed integer not null default 0,
        max_updated_at timestamptz,
        done boolean not null default false,
        create_time timestamptz not null default now(),
        update_time timestamptz not null default now()
      );
      create table stored_pages (
        id bigserial primary key,
        project_id uuid not null references projects(id) on delete cascade deferrable initially deferred,
        installation_id uuid not null references installations(id) on delete cascade deferrable initially deferred,
        object_name text not null,
        operation_id uuid not null,
        page_index integer not null,
        part_index integer not null,
        message_id text not null,
        num_records integer not null,
        body text not null,
        create_time timestamptz not null default now(),
        unique (operation_id, page_index, part_index)
      );
      create index stored_pages_object on stored_pages(installation_id, object_name, id);
      create table delivery_credits (
        installation_id uuid not null references installations(id) on delete cascade deferrable initially deferred,
        object_name text not null,
        project_id uuid not null,
        pages integer not null default 0 check (pages >= 0),
        update_time timestamptz not null default now(),
        primary key (installation_id, object_name)
      );
    `);
  }
}
