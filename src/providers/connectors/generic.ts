import type { ConnectorOptions } from '../connector.js';
import type { ConnectorCapabilities } from '../../schemas/capabilities.js';
import type { ConnectionTarget } from '../auth-material.js';
import { BaseConnector, noCapabilities } from './base.js';

/**
 * The connector of a provider known only from catalog data: it proxies authenticated requests
 * (when the catalog allows proxying) and answers `CapabilityNotSupportedError` to everything else.
 */
export class GenericConnector extends BaseConnector {
  readonly capabilities: Readonly<ConnectorCapabilities>;

  constructor(target: ConnectionTarget, options: ConnectorOptions = {}) {
    super(target, options);
    this.capabilities = Object.freeze({ ...noCapabilities, proxy: this.catalog.support.proxy });
  }
}
