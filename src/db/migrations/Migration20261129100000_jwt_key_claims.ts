import { Migration } from '@mikro-orm/migrations';

/** The audience and issuer a JWT key's tokens must carry, where the builder sets them. */
export class Migration20261129100000_jwt_key_claims extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      'alter table jwt_keys add column if not exists audience text null, add column if not exists issuer text null;',
    );
  }
}
