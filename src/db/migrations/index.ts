import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261121000000_foundation } from './Migration20261121000000_foundation.js';
import { Migration20261121000100_runtime } from './Migration20261121000100_runtime.js';
import { Migration20261121002000_oauth } from './Migration20261121002000_oauth.js';
import { Migration20261121001000_notifications } from './Migration20261121001000_notifications.js';
import { Migration20261121004000_installations } from './Migration20261121004000_installations.js';
import { Migration20261121005000_reads } from './Migration20261121005000_reads.js';
import { Migration20261123000000_subscription_events } from './Migration20261123000000_subscription_events.js';
import { Migration20261123100000_schema_watch } from './Migration20261123100000_schema_watch.js';
import { Migration20261123200000_retention } from './Migration20261123200000_retention.js';
import { Migration20261124000000_repair_marks } from './Migration20261124000000_repair_marks.js';
import { Migration20261125100000_attempt_ledger } from './Migration20261125100000_attempt_ledger.js';
import { Migration20261126000000_exclusive_runs } from './Migration20261126000000_exclusive_runs.js';
import { Migration20261127000000_list_order_indexes } from './Migration20261127000000_list_order_indexes.js';
import { Migration20261128000000_refresh_token_expiry } from './Migration20261128000000_refresh_token_expiry.js';
import { Migration20261129000000_nfc_names } from './Migration20261129000000_nfc_names.js';
import { Migration20261129100000_jwt_key_claims } from './Migration20261129100000_jwt_key_claims.js';
import { Migration20261129200000_change_tracking } from './Migration20261129200000_change_tracking.js';
import { Migration20261130100000_destination_metadata } from './Migration20261130100000_destination_metadata.js';
import { Migration20261130200000_read_fingerprints } from './Migration20261130200000_read_fingerprints.js';
import { Migration20261201300000_subscription_expiry } from './Migration20261201300000_subscription_expiry.js';
import { Migration20261201400000_deployed_manifests } from './Migration20261201400000_deployed_manifests.js';

/**
 * Migrations are listed explicitly rather than discovered from disk, so they run the same under
 * tsx, Jest and a bundled image. Append new ones in order.
 */
export const migrationsList: MigrationObject[] = [
  { name: 'Migration20261121000000_foundation', class: Migration20261121000000_foundation },
  { name: 'Migration20261121000100_runtime', class: Migration20261121000100_runtime },
  { name: 'Migration20261121001000_notifications', class: Migration20261121001000_notifications },
  { name: 'Migration20261121002000_oauth', class: Migration20261121002000_oauth },
  { name: 'Migration20261121004000_installations', class: Migration20261121004000_installations },
  { name: 'Migration20261121005000_reads', class: Migration20261121005000_reads },
  {
    name: 'Migration20261123000000_subscription_events',
    class: Migration20261123000000_subscription_events,
  },
  { name: 'Migration20261123100000_schema_watch', class: Migration20261123100000_schema_watch },
  { name: 'Migration20261123200000_retention', class: Migration20261123200000_retention },
  { name: 'Migration20261124000000_repair_marks', class: Migration20261124000000_repair_marks },
  { name: 'Migration20261125100000_attempt_ledger', class: Migration20261125100000_attempt_ledger },
  { name: 'Migration20261126000000_exclusive_runs', class: Migration20261126000000_exclusive_runs },
  { name: 'Migration20261127000000_list_order_indexes', class: Migration20261127000000_list_order_indexes },
  {
    name: 'Migration20261128000000_refresh_token_expiry',
    class: Migration20261128000000_refresh_token_expiry,
  },
  { name: 'Migration20261129000000_nfc_names', class: Migration20261129000000_nfc_names },
  { name: 'Migration20261129100000_jwt_key_claims', class: Migration20261129100000_jwt_key_claims },
  { name: 'Migration20261129200000_change_tracking', class: Migration20261129200000_change_tracking },
  {
    name: 'Migration20261130100000_destination_metadata',
    class: Migration20261130100000_destination_metadata,
  },
  { name: 'Migration20261130200000_read_fingerprints', class: Migration20261130200000_read_fingerprints },
  {
    name: 'Migration20261201300000_subscription_expiry',
    class: Migration20261201300000_subscription_expiry,
  },
  { name: 'Migration20261201400000_deployed_manifests', class: Migration20261201400000_deployed_manifests },
];
