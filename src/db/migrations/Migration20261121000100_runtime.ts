import { Migration } from '@mikro-orm/migrations';

/** Connections, installations, destinations and operations: the tables the runtime issues share. */
export class Migration20261121000100_runtime extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table groups (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade deferrable initially deferred,
        group_ref text not null,
        group_name text not null,
        create_time timestamptz not null default now(),
        update_time timestamptz not null default now(),
        unique (project_id, group_ref)
      );
      create table consumers (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade deferrable initially deferred,
        consumer_ref text not null,
        consumer_name text not null,
        create_time timestamptz not null default now(),
        update_time timestamptz not null default now(),
        unique (project_id, consumer_ref)
      );
      create table provider_apps (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade deferrable initially deferred,
        provider text not null,
        external_ref text,
        client_id text not null,
        client_secret_encrypted text not null,
        scopes jsonb not null default '[]',
        metadata jsonb not null default '{}',
        create_time timestamptz not null default now(),
        update_time timestamptz not null default now()
      );
      create index provider_apps_project on provider_apps(project_id, provider);
      create table connections (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade deferrable initially deferred,
        provider text not null,
        group_id uuid not null references groups(id) deferrable initially deferred,
        consumer_id uuid not null references consumers(id) deferrable initially deferred,
        provider_app_id uuid references provider_apps(id) on delete set null deferrable initially deferred,
        provider_workspace_ref text,
        provider_consumer_ref text,
        auth_scheme text not null,
        status text not null,
        credentials_encrypted text not null,
        scopes jsonb not null default '[]',
        access_token_issued_at timestamptz,
        access_token_expires_at timestamptz,
        refresh_token_issued_at timestamptz,
        provider_metadata jsonb not null default '{}',
        last_error text,
        create_time timestamptz not null default now(),
        update_time timestamptz not null default now()
      );
      create index connections_project on connections(project_id, provider);
      create index connections_group on connections(group_id, provider);
      create table installations (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade deferrable initially deferred,
        integration_id uuid not null references integrations(id) deferrable initially deferred,
        group_id uuid not null references groups(id) deferrable initially deferred,
        connection_id uuid not null references connections(id) deferrable initially deferred,
        config_id uuid not null,
        created_by text not null,
        health_status text not null default 'healthy',
        last_operation_status text,
        create_time timestamptz not null default now(),
        update_time timestamptz not null default now(),
        unique (integration_id, group_id)
      );
      create index installations_project on installations(project_id, create_time);
      create table installation_configs (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade deferrable initially deferred,
        installation_id uuid not null references installations(id) on delete cascade deferrable initially deferred,
        revision_id uuid not null references revisions(id) deferrable initially deferred,
        content jsonb not null,
        created_by text not null,
        create_time timestamptz not null default now()
      );
      create index installation_configs_installation on installation_configs(installation_id, create_time desc);
      create table read_watermarks (
        installation_id uuid not null references installations(id) on delete cascade deferrable initially deferred,
        object_name text not null,
        project_id uuid not null,
        watermark timestamptz,
        backfill_done boolean not null default false,
        update_time timestamptz not null default now(),
        primary key (installation_id, object_name)
      );
      create table destinations (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade deferrable initially deferred,
        name text not null,
        type text not null,
        url text not null,
        headers jsonb not null default '{}',
        secrets_encrypted text not null,
        disabled_time timestamptz,
        first_failure_time timestamptz,
        create_time timestamptz not null default now(),
        update_time timestamptz not null default now(),
        unique (project_id, name)
      );
      create table operations (
        id uuid primary key,
        seq bigserial not null unique,
        project_id uuid not null references projects(id) on delete cascade deferrable initially deferred,
        integration_id uuid not null,
        installation_id uuid not null,
        config_id uuid not null,
        action_type text not null,
        status text not null,
        result text,
        metadata jsonb not null default '{}',
        create_time timestamptz not null default now(),
        update_time timestamptz not null default now()
      );
      create index operations_installation on operations(installation_id, seq desc);
      create table operation_logs (
        id bigserial primary key,
        project_id uuid not null,
        operation_id uuid not null references operations(id) on delete cascade deferrable initially deferred,
        timestamp timestamptz not null default now(),
        severity text not null,
        msg text not null,
        error text,
        details jsonb not null default '{}'
      );
      create index operation_logs_operation on operation_logs(operation_id, id);
    `);
  }
}
