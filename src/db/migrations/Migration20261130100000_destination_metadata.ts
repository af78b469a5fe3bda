import { Migration } from '@mikro-orm/migrations';

/**
 * Destinations become a family (webhook, rabbitmq, postgres, …): the settings of types other than
 * webhook live in `metadata`; their credentials stay in `secrets_encrypted` with the webhook's.
 */
export class Migration20261130100000_destination_metadata extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table destinations add column if not exists metadata jsonb not null default '{}';`);
  }
}
