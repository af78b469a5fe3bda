import { Migration } from '@mikro-orm/migrations';

/**
 * Reads follow what the provider returned (a read's checkpoint gathers it page by page, and its
 * object's position takes it when the read succeeds): the newest deletion delivered from a listing of
 * deletions, the provider's own cursor where a listing resumes from one, and the records recently
 * delivered (id, modification time and a fingerprint of their content), so that what the next read's overlap shows again is not
 * delivered twice. Only records within an overlap of the newest change are kept.
 */
export class Migration20261129200000_change_tracking extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      alter table read_watermarks add column if not exists deleted_watermark timestamptz null;
      alter table read_watermarks add column if not exists resume_cursor text null;
      alter table read_checkpoints add column if not exists max_deleted_at timestamptz null;
      alter table read_checkpoints add column if not exists resume_cursor text null;
      create table if not exists read_seen (
        installation_id uuid not null references installations(id) on delete cascade deferrable initially deferred,
        object_name text not null,
        record_id text not null,
        project_id uuid not null,
        updated_at timestamptz not null,
        deleted boolean not null default false,
        content_hash text not null,
        primary key (installation_id, object_name, record_id)
      );
      create index if not exists read_seen_age on read_seen (installation_id, object_name, updated_at);
    `);
  }
}
