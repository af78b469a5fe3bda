import type { ConnectorHooks } from '../declarative/connector.js';
import { SKEW_ALLOWANCE_MS } from '../declarative/read.js';

/**
 * Zendesk Support's quirks (the rest is `catalog/connectors/zendeskSupport.json`), both about the
 * incremental exports, whose first request must carry a `start_time` at least a minute old:
 *
 * - Closed tickets are archived after 120 days and then missing from `GET /api/v2/tickets.json`;
 *   only the ticket export lists every ticket. Tickets are therefore always read from the export, a
 *   full read from its beginning (`start_time=0`).
 * - A windowed read starting less than a minute ago (a first read right after an installation, a
 *   clock a little ahead of Zendesk's) would be refused with a 400, and the export leaves that
 *   minute out anyway: such a read lists nothing, and the next one, starting at the same point,
 *   reads it.
 */

const exportedOnly = new Set(['tickets']);
const exported = new Set(['tickets', 'users']);

/** The newest `start_time` the exports take: a minute ago, less what our clock may be ahead. */
const HELD_BACK_MS = 60_000 + SKEW_ALLOWANCE_MS;

export const zendeskSupportHooks: ConnectorHooks = {
  async readPage(connector, input, declared) {
    if (input.pageToken || input.resumeFrom || !exported.has(input.objectName)) return declared();
    if (!input.since) {
      return exportedOnly.has(input.objectName)
        ? connector.readDeclaredPage({ ...input, since: new Date(0) })
        : declared();
    }
    if (input.since.getTime() > Date.now() - HELD_BACK_MS) return { records: [], done: true };
    return declared();
  },
};
