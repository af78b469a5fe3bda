import { Migration } from '@mikro-orm/migrations';

/** OAuth flows in flight, and one connection per group and provider. */
export class Migration20261121002000_oauth extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table oauth_states (
        id uuid primary key,
        state_hash text not null unique,
        project_id uuid not null references projects(id) on delete cascade deferrable initially deferred,
        provider text not null,
        provider_app_id uuid not null references provider_apps(id) on delete cascade deferrable initially deferred,
        connection_id uuid references connections(id) on delete cascade deferrable initially deferred,
        group_ref text not null,
        group_name text,
        consumer_ref text not null,
        consumer_name text,
        provider_workspace_ref text,
        provider_metadata jsonb not null default '{}',
        scopes jsonb not null default '[]',
        code_verifier_encrypted text,
        redirect_uri text not null,
        redirect_url text,
        expire_time timestamptz not null,
        consume_time timestamptz,
        create_time timestamptz not null default now()
      );
      create index oauth_states_expire on oauth_states(expire_time);
      create unique index connections_group_provider on connections(group_id, provider);
    `);
  }
}
