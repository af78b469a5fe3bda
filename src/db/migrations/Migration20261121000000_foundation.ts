import { Migration } from '@mikro-orm/migrations';

export class Migration20261121000000_foundation extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table orgs (
        id uuid primary key,
        name text not null,
        create_time timestamptz not null default now(),
        update_time timestamptz not null default now()
      );
      create table builders (
        id uuid primary key,
        email text not null unique,
        name text,
        create_time timestamptz not null default now(),
        update_time timestamptz not null default now()
      );
      create table org_memberships (
        id uuid primary key,
        org_id uuid not null references orgs(id) on delete cascade deferrable initially deferred,
        builder_id uuid not null references builders(id) on delete cascade deferrable initially deferred,
        role text not null,
        create_time timestamptz not null default now(),
        update_time timestamptz not null default now(),
        unique (org_id, builder_id)
      );
      create table projects (
        id uuid primary key,
        org_id uuid not null references orgs(id) deferrable initially deferred,
        name text not null unique,
        app_name text not null,
        create_time timestamptz not null default now(),
        update_time timestamptz not null default now()
      );
      create table api_keys (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade deferrable initially deferred,
        label text not null,
        prefix text not null,
        key_hash text not null unique,
        scopes jsonb not null default '[]',
        active boolean not null default true,
        last_used_time timestamptz,
        create_time timestamptz not null default now(),
        update_time timestamptz not null default now()
      );
      create index api_keys_project on api_keys(project_id);
      create table integrations (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade deferrable initially deferred,
        name text not null,
        provider text not null,
        latest_revision_id uuid not null,
        create_time timestamptz not null default now(),
        update_time timestamptz not null default now(),
        unique (project_id, name)
      );
      create table revisions (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade deferrable initially deferred,
        integration_id uuid not null references integrations(id) on delete cascade deferrable initially deferred,
        spec_version text not null,
        content jsonb not null,
        create_time timestamptz not null default now()
      );
      create index revisions_integration on revisions(integration_id, create_time desc);
      create table events (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade deferrable initially deferred,
        type text not null,
        data jsonb not null,
        create_time timestamptz not null default now(),
        routed_time timestamptz
      );
      create index events_project_time on events(project_id, create_time desc, id desc);
      create index events_unrouted on events(create_time) where routed_time is null;
    `);
  }
}
