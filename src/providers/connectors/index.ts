import type { Connector, ConnectorOptions } from '../connector.js';
import type { ConnectionTarget } from '../auth-material.js';
import { isKnownProvider } from '../catalog/index.js';
import { GenericConnector } from './generic.js';
import { HubSpotConnector } from './hubspot.js';
import { SandboxConnector } from './sandbox.js';

type ConnectorFactory = (target: ConnectionTarget, options: ConnectorOptions) => Connector;

/** Providers with a deep connector (read, write, metadata...). Every other catalog provider gets `GenericConnector`. */
const deepConnectors: Record<string, ConnectorFactory> = {
  sandbox: (target, options) => new SandboxConnector(target, options),
  sandboxApiKey: (target, options) => new SandboxConnector(target, options),
  hubspot: (target, options) => new HubSpotConnector(target, options),
};

export function hasDeepConnector(provider: string): boolean {
  return Object.hasOwn(deepConnectors, provider);
}

/**
 * The connector for one connection. Cheap to create (no I/O): make one per unit of work.
 * Throws for a provider missing from the catalog, which a stored connection never names.
 */
export function connectorFor(target: ConnectionTarget, options: ConnectorOptions = {}): Connector {
  if (!isKnownProvider(target.provider)) {
    throw new Error(`Provider "${target.provider}" is not in Ferry's catalog.`);
  }
  const factory = Object.hasOwn(deepConnectors, target.provider)
    ? deepConnectors[target.provider]
    : undefined;
  return factory ? factory(target, options) : new GenericConnector(target, options);
}
