import { Migration } from '@mikro-orm/migrations';

/**
 * When a connection's refresh token stops working, where the provider says (`refresh_token_expires_in`)
 * or the caller imported it: shown as `refreshToken.expiresAt`, as the public Connection shape has it.
 */
export class Migration20261128000000_refresh_token_expiry extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      'alter table connections add column if not exists refresh_token_expires_at timestamptz null;',
    );
  }
}
