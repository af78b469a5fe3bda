import type { ConnectorHooks } from '../declarative/connector.js';

/**
 * Zendesk Support's quirks (the rest is `catalog/connectors/zendeskSupport.json`): closed tickets
 * are archived after 120 days and then missing from `GET /api/v2/tickets.json`; only the incremental
 * ticket export lists every ticket. Tickets are therefore always read from the export, a full read
 * from its beginning (`start_time=0`).
 */

const exportedOnly = new Set(['tickets']);

export const zendeskSupportHooks: ConnectorHooks = {
  async readPage(connector, input, declared) {
    if (input.pageToken || input.since || !exportedOnly.has(input.objectName)) return declared();
    return connector.readDeclaredPage({ ...input, since: new Date(0) });
  },
};
