import { Migration } from '@mikro-orm/migrations';

/**
 * The manifest files builders deploy (`integrations:batch`, revisions from a manifest), as they
 * wrote them: comments, order and layout kept, so the console can show the file the builder
 * maintains rather than YAML regenerated from the stored content. A project keeps its latest few.
 */
export class Migration20261201400000_deployed_manifests extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table if not exists deployed_manifests (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade deferrable initially deferred,
        source_yaml text not null,
        create_time timestamptz not null default now()
      );
      create index if not exists deployed_manifests_project_time on deployed_manifests (project_id, create_time desc);
    `);
  }
}
