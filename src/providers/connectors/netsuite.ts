import type { ConnectorHooks } from '../declarative/connector.js';

/**
 * NetSuite's quirk (the rest is `catalog/connectors/netsuite.json`): a SuiteQL statement names the
 * columns it returns, so a read that chooses no fields asks for every column (`*`) beside the
 * modification time the declaration always renders with `TO_CHAR` (SuiteQL writes dates in the
 * user's date format, `1/15/2024`, without the time).
 */
export const netsuiteHooks: ConnectorHooks = {
  async readPage(connector, input, declared) {
    if (input.fields?.length) return declared();
    return connector.readDeclaredPage({ ...input, fields: ['*'] });
  },
};
