import type { Config } from '../../config.js';
import type { DeliverySettings } from '../destination-delivery.js';

/**
 * What a read is configured with (pages and time per activity, the longest provider wait worth
 * holding a read for, the provider page size, and delivery's own settings), handed down from the
 * activity that runs the read rather than read from the environment deep inside it.
 */
export type ReadSettings = DeliverySettings &
  Pick<Config, 'readPagesPerActivity' | 'readActivityMs' | 'providerMaxWaitMs' | 'readProviderPageSize'>;
