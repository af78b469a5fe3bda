import { Migration } from '@mikro-orm/migrations';

/**
 * Provider subscriptions of installations: one row per subscribed object, holding the provider's id
 * of the subscription (to update or delete it later) and its signing secret, sealed. Ferry's own id
 * is the last segment of the webhook URL the provider posts to. Rows deliberately do not cascade
 * with their installation: the installation workflow removes them at the provider first, and a row
 * left behind by a provider failure still names what to clean up.
 */
export class Migration20261121004000_installations extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table subscriptions (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade deferrable initially deferred,
        installation_id uuid not null,
        provider text not null,
        object_name text not null,
        provider_subscription_id text not null,
        secret_encrypted text,
        config jsonb not null default '{}',
        create_time timestamptz not null default now(),
        update_time timestamptz not null default now(),
        unique (installation_id, object_name)
      );
    `);
  }
}
