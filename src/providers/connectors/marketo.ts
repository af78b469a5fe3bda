import type { ProviderRecord, ReadPageInput } from '../connector.js';
import type { ConnectorHooks } from '../declarative/connector.js';
import type { HookContext } from '../declarative/context.js';
import { valueAt } from '../declarative/json-pointer.js';

/**
 * Marketo's quirks (the rest is `catalog/connectors/marketo.json`):
 *
 * - Nothing lists leads changed since a time, nor every lead: changes are activities. A read walks
 *   the activity stream from a paging token (`New Lead` and `Change Data Value` activities, as
 *   declared), then asks for the leads those activities name, by id, with the fields chosen (every
 *   described field when none is), and delivers the leads.
 * - A paging token needs a `sinceDatetime`: a read from the start (a backfill) asks from the epoch,
 *   and gets whatever the activity retention still holds (verify how far back that is).
 * - The paging token's answer lists nothing: the read goes straight on to the first page of
 *   activities it points at, so a read's first page is a page of records like any other.
 */

/** `GET /rest/v1/leads.json` takes at most 300 filter values, as many as an activity page holds. */
const LEADS_BY_ID = 300;
const FROM_THE_START = new Date(0);

const describedNames = new WeakMap<HookContext, Promise<string[]>>();

function leadFieldNames(connector: HookContext): Promise<string[]> {
  let names = describedNames.get(connector);
  if (!names) {
    names = connector.declaredMetadata('leads').then((metadata) => Object.keys(metadata.fields));
    describedNames.set(connector, names);
  }
  return names;
}

/** The leads the page's activities name, in the order first named; leads deleted since are gone. */
async function leadsOf(
  connector: HookContext,
  input: ReadPageInput,
  activities: ProviderRecord[],
): Promise<ProviderRecord[]> {
  const ids = [...new Set(activities.map((activity) => activity.id))];
  if (!ids.length) return [];
  const object = connector.object('leads');
  const fields = [...new Set([...(input.fields ?? (await leadFieldNames(connector))), 'id', 'updatedAt'])];
  const leads: ProviderRecord[] = [];
  for (let start = 0; start < ids.length; start += LEADS_BY_ID) {
    const request = connector.request(
      {
        method: 'GET',
        path: '/rest/v1/leads.json',
        query: { filterType: 'id', filterValues: '{{id}}', fields: '{{fields|join:,}}' },
      },
      {
        ...connector.templateValues('leads', object),
        id: ids.slice(start, start + LEADS_BY_ID).join(','),
        fields,
      },
      true,
    );
    const response = await connector.send('leads', request);
    const listed = valueAt(response.body, '/result');
    for (const lead of Array.isArray(listed) ? listed : []) leads.push(connector.record(object, lead));
  }
  const byId = new Map(leads.map((lead) => [lead.id, lead]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

export const marketoHooks: ConnectorHooks = {
  async readPage(connector, input, declared) {
    const first = !input.pageToken && !input.resumeFrom;
    let page =
      first && !input.since
        ? await connector.readDeclaredPage({ ...input, since: FROM_THE_START })
        : await declared();
    if (first && !page.records.length && page.nextPageToken)
      page = await connector.readDeclaredPage({ ...input, pageToken: page.nextPageToken });
    if (input.objectName !== 'leads' || page.deletions) return page;
    return { ...page, records: await leadsOf(connector, input, page.records) };
  },
};
