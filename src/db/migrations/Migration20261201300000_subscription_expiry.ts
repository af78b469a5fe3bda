import { Migration } from '@mikro-orm/migrations';

/**
 * Subscriptions that the provider ends unless Ferry renews them (Microsoft Graph's, Jira's dynamic
 * webhooks): when the current one expires. Null for providers whose subscriptions last.
 */
export class Migration20261201300000_subscription_expiry extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table subscriptions add column if not exists expires_at timestamptz;`);
  }
}
