import type { ConnectorHooks } from '../declarative/connector.js';
import type { HookContext } from '../declarative/context.js';
import type { ProviderRecord, ReadPageInput } from '../connector.js';
import type { ProviderHttpRequest } from '../http.js';
import { valueAt } from '../declarative/json-pointer.js';

/**
 * ActiveCampaign's quirks (the rest is `catalog/connectors/activeCampaign.json`):
 * - Its lists carry no custom field values: a contact's are at `GET /api/3/contacts/{id}/fieldValues`
 *   and a deal's at `GET /api/3/dealCustomFieldData?filters[dealId]=`, one call per record, with no
 *   call that gives them for many records. Each page's records get them, under the member their
 *   writes take (`fieldValues` of `{field, value}`, `fields` of `{customFieldId, fieldValue}`), which
 *   the declaration's `values` containers name by field id. A read whose chosen fields name no custom
 *   field skips those calls (five a second is the account's whole budget).
 */

interface CustomValues {
  /** The request listing one record's custom values. */
  request(id: string): ProviderHttpRequest;
  /** Where the answer lists them. */
  listed: string;
  /** The record member they go under: the container the declaration's `values` reads and writes fold into. */
  member: string;
  /** The prefix of the names the container gives them. */
  prefix: string;
}

const customValues: Record<string, CustomValues> = {
  contacts: {
    request: (id) => ({
      method: 'GET',
      path: `/api/3/contacts/${encodeURIComponent(id)}/fieldValues`,
      idempotent: true,
    }),
    listed: '/fieldValues',
    member: 'fieldValues',
    prefix: 'fieldValues.',
  },
  deals: {
    request: (id) => ({
      method: 'GET',
      path: '/api/3/dealCustomFieldData',
      query: { 'filters[dealId]': id, limit: '100' },
      idempotent: true,
    }),
    listed: '/dealCustomFieldData',
    member: 'fields',
    prefix: 'fields.',
  },
};

/** Whether the read wants custom values: every field, or a chosen one of them. */
function wantsCustomValues(input: ReadPageInput, values: CustomValues): boolean {
  return !input.fields?.length || input.fields.some((field) => field.startsWith(values.prefix));
}

async function withCustomValues(
  connector: HookContext,
  objectName: string,
  values: CustomValues,
  record: ProviderRecord,
): Promise<ProviderRecord> {
  const response = await connector.send(objectName, values.request(record.id));
  const listed = valueAt(response.body, values.listed);
  const raw = { ...record.raw, [values.member]: Array.isArray(listed) ? listed : [] };
  const whole = connector.record(connector.object(objectName), raw);
  return { ...record, raw, ...(whole.values && { values: whole.values }) };
}

export const activeCampaignHooks: ConnectorHooks = {
  async readPage(connector, input, declared) {
    const page = await declared();
    const values = Object.hasOwn(customValues, input.objectName) ? customValues[input.objectName] : undefined;
    if (!values || page.deletions || !page.records.length || !wantsCustomValues(input, values)) return page;
    const records = await Promise.all(
      page.records.map((record) => withCustomValues(connector, input.objectName, values, record)),
    );
    return { ...page, records };
  },
};
