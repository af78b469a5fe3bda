import type { ProviderRecord, ReadPageInput, ReadPageResult } from '../connector.js';
import type { ConnectorHooks } from '../declarative/connector.js';
import type { HookContext } from '../declarative/context.js';
import { valueAt } from '../declarative/json-pointer.js';
import { decodePageToken, encodePageToken } from '../page-token.js';
import type { FieldMetadata } from '../../schemas/object-metadata.js';

/**
 * Freshdesk's quirks (the rest is `catalog/connectors/freshdesk.json`):
 *
 * - The ticket list answers at most 300 pages to one query. Tickets are listed by `updated_at`
 *   ascending, so after the 300th page a read asks again from the newest time it has listed (the
 *   tickets of that second are listed again, and recognised downstream).
 * - The values a ticket's status, priority, source and type take are the account's own (custom
 *   statuses from 6 on), listed by `GET /api/v2/ticket_fields` on its default fields, whose
 *   choices a declaration cannot read: an object of value → [agent label, customer label] for the
 *   status, of label → value for the priority and source, a list of labels for the type.
 */

/** The most pages Freshdesk lists for one ticket query. */
export const TICKET_PAGE_LIMIT = 300;

/** Where a ticket read stands: the declared read's token and its page count, or a new start. */
interface TicketToken extends Record<string, unknown> {
  o: 'tickets';
  /** Pages read of the current query. */
  n: number;
  /** The declared read's own token. */
  t?: string;
  /** Start a new query from this time (ms): the last one reached the page limit. */
  from?: number;
  /** Where the current query started, when a restart started it (ms). */
  s?: number;
  /** The current query lists deletions (the listing of deletions follows the changes). */
  d?: boolean;
}

function newestTime(records: readonly ProviderRecord[]): number | undefined {
  const times = records.flatMap((record) => (record.updatedAt ? [Date.parse(record.updatedAt)] : []));
  return times.length ? Math.max(...times) : undefined;
}

async function ticketPage(connector: HookContext, input: ReadPageInput): Promise<ReadPageResult> {
  const token = input.pageToken
    ? decodePageToken<TicketToken>(input.pageToken, connector.provider, 'tickets')
    : undefined;
  const restart = token?.from !== undefined;
  const page = await connector.readDeclaredPage(
    restart
      ? // Deletions still count from where the read began.
        {
          ...input,
          pageToken: undefined,
          since: new Date(token.from!),
          deletedSince: input.deletedSince ?? input.since,
        }
      : { ...input, pageToken: token?.t },
  );
  if (!page.nextPageToken) return page;
  const deletions = page.deletions === true;
  // A page of another listing than the last token's is that query's first.
  const pages = !token || restart || (token.d === true) !== deletions ? 1 : token.n + 1;
  const newest = newestTime(page.records);
  const started = restart ? token.from : token?.s;
  const since = started ?? input.since?.getTime();
  // Only when time moved on: a query of one second's tickets cannot start any later.
  const moved = newest !== undefined && (since === undefined || newest > since);
  const next: TicketToken =
    pages >= TICKET_PAGE_LIMIT && !deletions && moved
      ? { o: 'tickets', n: 0, from: newest }
      : {
          o: 'tickets',
          n: pages,
          t: page.nextPageToken,
          ...(started !== undefined && { s: started }),
          ...(deletions && { d: true }),
        };
  return { ...page, nextPageToken: encodePageToken(next) };
}

/** Default ticket fields whose choices are a record member's values, by the member's name. */
const choicesOf: Record<string, string> = {
  status: 'status',
  priority: 'priority',
  source: 'source',
  ticket_type: 'type',
};

type Choice = { value: string; displayValue: string };

/** A default field's `choices`, in any of the shapes Freshdesk gives them, as allowed values. */
export function defaultFieldChoices(choices: unknown): Choice[] {
  if (Array.isArray(choices)) {
    return choices
      .filter((choice): choice is string | number => typeof choice === 'string' || typeof choice === 'number')
      .map((choice) => ({ value: String(choice), displayValue: String(choice) }));
  }
  if (!choices || typeof choices !== 'object') return [];
  return Object.entries(choices).flatMap(([key, value]): Choice[] => {
    // Status: {"2": ["Open", "Being Processed"]}; priority and source: {"Low": 1}.
    if (Array.isArray(value)) return [{ value: key, displayValue: String(value[0] ?? key) }];
    if (typeof value === 'number' || typeof value === 'string')
      return [{ value: String(value), displayValue: key }];
    return [];
  });
}

export const freshdeskHooks: ConnectorHooks = {
  async readPage(connector, input, declared) {
    return input.objectName === 'tickets' ? ticketPage(connector, input) : declared();
  },

  async listObjectMetadata(connector, objectName, declared) {
    const metadata = await declared();
    if (objectName !== 'tickets') return metadata;
    const response = await connector.send(objectName, {
      method: 'GET',
      path: '/api/v2/ticket_fields',
      idempotent: true,
    });
    const descriptors = Array.isArray(response.body) ? (response.body as unknown[]) : [];
    for (const descriptor of descriptors) {
      const name = valueAt(descriptor, '/name');
      if (valueAt(descriptor, '/default') !== true || typeof name !== 'string') continue;
      const member = Object.hasOwn(choicesOf, name) ? choicesOf[name] : undefined;
      const field: FieldMetadata | undefined = member ? metadata.fields[member] : undefined;
      const values = defaultFieldChoices(valueAt(descriptor, '/choices'));
      if (member && field && values.length) metadata.fields[member] = { ...field, values };
    }
    return metadata;
  },
};
