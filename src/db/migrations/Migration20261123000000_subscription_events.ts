import { Migration } from '@mikro-orm/migrations';

/**
 * Change events providers send to a subscription's webhook URL, once each: the unique provider event
 * id (or, when the provider gives none, a digest of the event) makes a redelivered event a no-op.
 * Each row is delivered by its own workflow and recorded as a subscribe operation; `message` holds
 * the exact body it sends, built once, so every attempt carries the same bytes.
 */
export class Migration20261123000000_subscription_events extends Migration {
  override async up(): Promise<void> {
    this.addSql(`
      create table subscription_events (
        id uuid primary key,
        project_id uuid not null references projects(id) on delete cascade deferrable initially deferred,
        subscription_id uuid not null references subscriptions(id) on delete cascade deferrable initially deferred,
        installation_id uuid not null,
        provider_event_id text not null,
        event jsonb not null,
        operation_id uuid,
        message text,
        skipped_reason text,
        create_time timestamptz not null default now(),
        unique (subscription_id, provider_event_id)
      );
      create index subscription_events_installation on subscription_events (installation_id, create_time);
    `);
  }
}
