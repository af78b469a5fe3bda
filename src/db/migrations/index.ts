import type { MigrationObject } from '@mikro-orm/core';
import { Migration20261121000000_foundation } from './Migration20261121000000_foundation.js';
import { Migration20261121000100_runtime } from './Migration20261121000100_runtime.js';

/**
 * Migrations are listed explicitly rather than discovered from disk, so they run the same under
 * tsx, Jest and a bundled image. Append new ones in order.
 */
export const migrationsList: MigrationObject[] = [
  { name: 'Migration20261121000000_foundation', class: Migration20261121000000_foundation },
  { name: 'Migration20261121000100_runtime', class: Migration20261121000100_runtime },
];
