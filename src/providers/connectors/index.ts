import type { ConnectionTarget } from '../auth-material.js';
import { connectorDeclaration, isKnownProvider } from '../catalog/index.js';
import { ConnectorDeclarationError, effectiveObject } from '../catalog/connector-declarations.js';
import type { ChangeTracking, Connector, ConnectorOptions } from '../connector.js';
import { DeclaredConnector, type ConnectorHooks } from '../declarative/connector.js';
import { changeTracking } from '../declarative/read.js';
import { activeCampaignHooks } from './activeCampaign.js';
import { asanaHooks } from './asana.js';
import { atlassianHooks } from './atlassian.js';
import { closeHooks } from './close.js';
import { dynamicsCRMHooks } from './dynamicsCRM.js';
import { freshdeskHooks } from './freshdesk.js';
import { frontHooks } from './front.js';
import { githubHooks } from './github.js';
import { googleHooks } from './google.js';
import { gorgiasHooks } from './gorgias.js';
import { gustoHooks } from './gusto.js';
import { helpScoutMailboxHooks } from './helpScoutMailbox.js';
import { hubspotHooks } from './hubspot.js';
import { leverHooks } from './lever.js';
import { marketoHooks } from './marketo.js';
import { salesforceHooks } from './salesforce.js';
import { linearHooks } from './linear.js';
import { mondayHooks } from './monday.js';
import { netsuiteHooks } from './netsuite.js';
import { notionHooks } from './notion.js';
import { pipedriveHooks } from './pipedrive.js';
import { quickbooksHooks } from './quickbooks.js';
import { sandboxHooks } from './sandbox.js';
import { typeformHooks } from './typeform.js';
import { shopifyHooks } from './shopify.js';
import { zendeskSupportHooks } from './zendeskSupport.js';
import { zohoHooks } from './zoho.js';

/** Code for providers' quirks, by the module name their declarations give under `hooks.module`. */
const hookModules: Record<string, ConnectorHooks> = {
  hubspot: hubspotHooks,
  helpScoutMailbox: helpScoutMailboxHooks,
  lever: leverHooks,
  sandbox: sandboxHooks,
  close: closeHooks,
  shopify: shopifyHooks,
  asana: asanaHooks,
  atlassian: atlassianHooks,
  salesforce: salesforceHooks,
  zendeskSupport: zendeskSupportHooks,
  freshdesk: freshdeskHooks,
  gorgias: gorgiasHooks,
  github: githubHooks,
  google: googleHooks,
  front: frontHooks,
  zoho: zohoHooks,
  linear: linearHooks,
  notion: notionHooks,
  monday: mondayHooks,
  pipedrive: pipedriveHooks,
  quickbooks: quickbooksHooks,
  activeCampaign: activeCampaignHooks,
  dynamicsCRM: dynamicsCRMHooks,
  gusto: gustoHooks,
  marketo: marketoHooks,
  netsuite: netsuiteHooks,
  typeform: typeformHooks,
};

/** What each capability a declaration gives to its hooks needs them to implement. */
const hookMethods: Record<string, (keyof ConnectorHooks)[]> = {
  customFields: ['upsertCustomFields'],
  subscribe: ['subscribe', 'updateSubscription', 'deleteSubscription', 'verifyWebhook'],
  count: ['estimateCount'],
};

function hooksOf(provider: string): ConnectorHooks | undefined {
  const declared = connectorDeclaration(provider)?.hooks;
  if (!declared) return undefined;
  const hooks = Object.hasOwn(hookModules, declared.module) ? hookModules[declared.module] : undefined;
  if (!hooks) {
    throw new ConnectorDeclarationError(
      `${provider}: hooks.module: no hooks module "${declared.module}" is registered`,
    );
  }
  for (const capability of declared.capabilities ?? []) {
    const missing = hookMethods[capability].filter((method) => !hooks[method]);
    if (missing.length) {
      throw new ConnectorDeclarationError(
        `${provider}: hooks.capabilities: "${capability}" needs the hooks ${missing.join(', ')} in module "${declared.module}"`,
      );
    }
  }
  return hooks;
}

/** Whether the provider has deep support (a connector declaration) beyond authentication and proxying. */
export function hasDeepConnector(provider: string): boolean {
  return connectorDeclaration(provider) !== undefined;
}

/**
 * The connector for one connection. Cheap to create (no I/O): make one per unit of work.
 * Throws for a provider missing from the catalog, which a stored connection never names.
 */
export function connectorFor(target: ConnectionTarget, options: ConnectorOptions = {}): Connector {
  if (!isKnownProvider(target.provider)) {
    throw new Error(`Provider "${target.provider}" is not in Ferry's catalog.`);
  }
  return new DeclaredConnector(
    target,
    options,
    connectorDeclaration(target.provider),
    hooksOf(target.provider),
  );
}

/**
 * How reads of one object follow its changes, from its declaration alone (no connection needed);
 * undefined when Ferry cannot read the object.
 */
export function changeTrackingFor(provider: string, objectName: string): ChangeTracking | undefined {
  const declaration = connectorDeclaration(provider);
  const object = declaration && effectiveObject(declaration, objectName);
  return object?.read ? changeTracking(object) : undefined;
}
