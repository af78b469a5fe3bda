import type { ConnectorHooks } from '../declarative/connector.js';

/**
 * Notion's quirk (the rest is `catalog/connectors/notion.json`): a page's `last_edited_time` is
 * rounded down to the minute, so a page edited a few seconds after a window's start reads as edited
 * before it. A windowed read therefore starts at the start of its first minute: the pages edited in
 * that minute may come twice (in this window and the one before), never not at all.
 */
const minute = 60_000;

export const notionHooks: ConnectorHooks = {
  async readPage(connector, input, declared) {
    if (input.pageToken || !input.since) return declared();
    const since = new Date(Math.floor(input.since.getTime() / minute) * minute);
    return connector.readDeclaredPage({ ...input, since });
  },
};
