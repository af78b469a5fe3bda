import { Migration } from '@mikro-orm/migrations';

/**
 * Indexes in the order the project-wide lists are sent (`src/db/raw.ts` `rowBatches`): each batch
 * of a list starts where the last one ended, and without them every batch would sort the project's
 * whole table again. The installations index replaces `(project_id, create_time)`, which it covers.
 * `if not exists`, so an operator may build them beforehand with `create index concurrently` (README,
 * "API latency").
 */
export class Migration20261127000000_list_order_indexes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create index if not exists integrations_list_order on integrations (project_id, create_time, name);
      create index if not exists connections_list_order on connections (project_id, create_time, id);
      create index if not exists installations_list_order on installations (project_id, create_time, id);
      drop index if exists installations_project;
    `);
  }
}
