import { Migration } from '@mikro-orm/migrations';

/**
 * Objects the provider cannot list by change time are read whole every time (`read.fullRead`): a
 * compact fingerprint per record (a hash of the entry last delivered for it) tells a scheduled read
 * what is new or changed, and which read saw the record last (`seen_by`, an operation id) tells it,
 * after a complete walk, which records are gone. Rows go with their installation (cascade) and, when
 * their object leaves the installation's config, with the retention task `read-fingerprints`.
 * No index but the key: `seen_by` changes on every read, and updates that touch no index stay on
 * their page (fillfactor leaves them room).
 */
export class Migration20261130200000_read_fingerprints extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table if not exists read_fingerprints (
        installation_id uuid not null references installations(id) on delete cascade deferrable initially deferred,
        object_name text not null,
        record_id text not null,
        content_hash bytea not null,
        seen_by uuid not null,
        primary key (installation_id, object_name, record_id)
      ) with (fillfactor = 80);
    `);
  }
}
