import type { ProviderRecord, ReadPageInput, ReadPageResult } from '../connector.js';
import type { ConnectorHooks } from '../declarative/connector.js';
import type { HookContext } from '../declarative/context.js';
import { describedField } from '../declarative/field-metadata.js';
import { renderJson } from '../declarative/template.js';
import { ConnectorInputError, ProviderError } from '../errors.js';
import { decodePageToken, encodePageToken } from '../page-token.js';
import type { CustomFieldDefinition, CustomFieldUpsertResult } from '../../schemas/object-metadata.js';

/**
 * HubSpot's quirks (the rest is `catalog/connectors/hubspot.json`):
 * - Windowed reads search, and a search answers at most 10,000 results per query (`after` beyond is
 *   refused), with offsets that shift when an earlier record is modified mid-read. So every page
 *   re-anchors: the next query asks again from the newest modification time seen (GTE), skipping
 *   the ids already returned at exactly that instant. Offsets are used only inside a run of records
 *   sharing one millisecond; more than 10,000 of those cannot be read and fail the read, saying so.
 * - Custom fields are properties: POST creates one, and a 409 (it exists) turns into a PATCH.
 * - "Unable to infer object type" (400) means HubSpot has no such object: a 404.
 */

/** HubSpot refuses search offsets past 10,000. */
export const hubSpotSearchResultCap = 10_000;

/** Token of a windowed read: the anchor instant, ids already returned at it, offset among ties. */
interface SearchToken extends Record<string, unknown> {
  m: 'search';
  o: string;
  /** Anchor (ms): the next query asks for modification times at or after it. */
  ts?: number;
  /** Ids returned earlier whose modification time equals `ts`. */
  seen: string[];
  /** Offset among records sharing `ts`, when whole pages of them came back. */
  after: number;
  /** Exclusive upper bound (ms) of the read. */
  u?: number;
}

interface SearchPage {
  results: Record<string, unknown>[];
  paging?: { next?: { after: string } };
  total?: number;
}

interface HubSpotProperty {
  name: string;
  label: string;
  type: string;
  fieldType: string;
  description?: string;
  groupName?: string;
  options?: { label: string; value: string; displayOrder?: number }[];
  hasUniqueValue?: boolean;
}

/** The property group new custom properties go in: `contactinformation`, `companyinformation`... */
export function hubSpotDefaultGroup(objectName: string): string {
  const singular: Record<string, string> = { companies: 'company', line_items: 'lineitem' };
  return `${singular[objectName] ?? objectName.replace(/s$/, '')}information`;
}

function modifiedAt(record: Record<string, unknown>, property: string): number {
  const raw = (record.properties as Record<string, unknown> | undefined)?.[property] ?? record.updatedAt;
  return typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : Date.parse(String(raw));
}

function tooManyTies(connector: HookContext, objectName: string, anchor: number | undefined): ProviderError {
  const at = anchor === undefined ? 'one instant' : new Date(anchor).toISOString();
  return new ProviderError(
    connector.provider,
    `More than ${hubSpotSearchResultCap} HubSpot ${objectName} share the modification time ${at}; HubSpot search cannot page past ${hubSpotSearchResultCap} results of one query. Read this window without "since" (a full read) instead.`,
    { retryable: false },
  );
}

/** One page of a windowed read, re-anchored as described above. */
async function searchPage(connector: HookContext, input: ReadPageInput): Promise<ReadPageResult> {
  const objectName = input.objectName;
  const object = connector.object(objectName);
  const listing = object.read!.incremental!;
  const modified = object.vars!.modified;
  const token = input.pageToken
    ? decodePageToken<SearchToken>(input.pageToken, connector.provider, objectName)
    : undefined;
  const limit = Math.max(1, Math.min(input.pageSize ?? listing.pageSize.max, listing.pageSize.max));
  const anchor = token ? token.ts : input.since?.getTime();
  const until = token ? token.u : input.until?.getTime();
  const offset = token?.after ?? 0;
  const seen = new Set(token?.seen ?? []);
  if (offset + limit > hubSpotSearchResultCap) throw tooManyTies(connector, objectName, anchor);

  const values = {
    object: objectName,
    vars: object.vars,
    ...(anchor !== undefined && { since: new Date(anchor) }),
    ...(until !== undefined && { until: new Date(until) }),
    pageSize: limit,
    fields: [...new Set([...(input.fields ?? []), modified])],
    ...(offset > 0 && { cursor: String(offset) }),
  };
  const window = (['since', 'until'] as const)
    .filter((bound) => values[bound] !== undefined)
    .map((bound) => renderJson(listing.window![bound], values));
  const { body } = await connector.send(
    objectName,
    connector.request(listing.request, { ...values, window }, true),
  );
  const page = body as SearchPage;
  const records: ProviderRecord[] = page.results
    .filter((record) => !seen.has(String(record.id)))
    .map((record) => connector.record(object, record));
  // At the 10,000 cap HubSpot stops offering a next page although `total` says more match.
  const more = Boolean(page.paging?.next) || offset + page.results.length < (page.total ?? 0);
  if (!more || page.results.length === 0) return { records, done: true };

  const times = page.results.map((record) => modifiedAt(record, modified));
  const last = times[times.length - 1];
  let next: SearchToken;
  if (Number.isFinite(last) && (anchor === undefined || last > anchor)) {
    // Re-anchor at the newest instant of this page; its ids there must not come back.
    const atLast = page.results
      .filter((_, index) => times[index] === last)
      .map((record) => String(record.id));
    next = {
      m: 'search',
      o: objectName,
      ts: last,
      seen: atLast,
      after: 0,
      ...(until !== undefined && { u: until }),
    };
  } else {
    // A whole page shared the anchor instant: page on among the ties with an offset.
    next = {
      ...(token ?? { m: 'search', o: objectName, seen: [], ...(until !== undefined && { u: until }) }),
      ts: anchor,
      after: offset + page.results.length,
    };
    if (next.after + limit > hubSpotSearchResultCap) throw tooManyTies(connector, objectName, anchor);
  }
  return { records, nextPageToken: encodePageToken(next), done: false };
}

/** Whether a page token continues a windowed read (a full read's token is the declared connector's). */
function isSearchToken(token: string): boolean {
  try {
    return JSON.parse(Buffer.from(token, 'base64url').toString('utf8')).m === 'search';
  } catch {
    return false;
  }
}

const hubSpotPropertyName = /^[a-z][a-z0-9_]*$/;

/** A custom-field definition as a HubSpot property; what HubSpot cannot honour becomes a warning. */
function propertyInput(
  objectName: string,
  definition: CustomFieldDefinition,
): {
  input: Omit<HubSpotProperty, 'options'> & {
    options?: { label: string; value: string; displayOrder: number }[];
  };
  warnings: string[];
} {
  const warnings: string[] = [];
  const { stringOptions, numericOptions } = definition;
  const options = (values: string[]) =>
    values.map((value, displayOrder) => ({ label: value, value, displayOrder }));
  const input: ReturnType<typeof propertyInput>['input'] = {
    name: definition.fieldName,
    label: definition.displayName,
    type: 'string',
    fieldType: 'text',
    groupName: hubSpotDefaultGroup(objectName),
    ...(definition.description !== undefined && { description: definition.description }),
    ...(definition.unique && { hasUniqueValue: true }),
  };
  switch (definition.valueType) {
    case 'string':
      if (stringOptions?.values?.length && stringOptions.valuesRestricted) {
        Object.assign(input, {
          type: 'enumeration',
          fieldType: 'select',
          options: options(stringOptions.values),
        });
      } else {
        if (stringOptions?.values?.length) warnings.push('HubSpot text properties keep no suggested values.');
        if (stringOptions?.length !== undefined)
          warnings.push('HubSpot text properties have no maximum length.');
      }
      break;
    case 'singleSelect':
      Object.assign(input, {
        type: 'enumeration',
        fieldType: 'select',
        options: options(stringOptions?.values ?? []),
      });
      break;
    case 'multiSelect':
      Object.assign(input, {
        type: 'enumeration',
        fieldType: 'checkbox',
        options: options(stringOptions?.values ?? []),
      });
      break;
    case 'int':
    case 'float':
      Object.assign(input, { type: 'number', fieldType: 'number' });
      if (numericOptions && Object.keys(numericOptions).length) {
        warnings.push('HubSpot number properties keep no precision, scale, bounds or default.');
      }
      break;
    case 'boolean':
      Object.assign(input, {
        type: 'bool',
        fieldType: 'booleancheckbox',
        options: [
          { label: 'Yes', value: 'true', displayOrder: 0 },
          { label: 'No', value: 'false', displayOrder: 1 },
        ],
      });
      break;
    case 'date':
      Object.assign(input, { type: 'date', fieldType: 'date' });
      break;
    case 'datetime':
      Object.assign(input, { type: 'datetime', fieldType: 'date' });
      break;
  }
  if (definition.required)
    warnings.push('HubSpot properties cannot be required; make the field required on forms.');
  if (stringOptions?.defaultValue !== undefined) warnings.push('HubSpot properties have no default value.');
  return { input, warnings };
}

export const hubspotHooks: ConnectorHooks = {
  async readPage(connector, input, declared) {
    const windowed = input.pageToken ? isSearchToken(input.pageToken) : Boolean(input.since || input.until);
    return windowed ? searchPage(connector, input) : declared();
  },

  async upsertCustomFields(connector, objectName, fields) {
    const metadata = connector.object(objectName).metadata!;
    for (const definition of fields) {
      if (!hubSpotPropertyName.test(definition.fieldName)) {
        throw new ConnectorInputError(
          `HubSpot property names are lower-case letters, digits and underscores, starting with a letter; "${definition.fieldName}" is not.`,
          connector.provider,
        );
      }
    }
    // Every definition is checked before the first call, so a bad one changes nothing.
    const inputs = fields.map((definition) => ({ definition, ...propertyInput(objectName, definition) }));
    const results: Record<string, CustomFieldUpsertResult> = {};
    const path = `/crm/v3/properties/${encodeURIComponent(objectName)}`;
    for (const { definition, input, warnings } of inputs) {
      const created = await connector.http.send({ method: 'POST', path, json: input });
      let property: unknown;
      let action: CustomFieldUpsertResult['action'] = 'create';
      if (created.status === 409) {
        const { name: _name, groupName: _group, hasUniqueValue, ...changes } = input;
        if (hasUniqueValue) warnings.push('HubSpot cannot make an existing property unique.');
        const updated = await connector.send(objectName, {
          method: 'PATCH',
          path: `${path}/${encodeURIComponent(definition.fieldName)}`,
          json: changes,
          idempotent: true,
        });
        property = updated.body;
        action = 'update';
      } else if (created.status >= 200 && created.status < 300) {
        property = created.body;
      } else {
        throw hubspotHooks.providerError!(
          connector,
          objectName,
          connector.http.errorFor({ method: 'POST', path }, created),
        );
      }
      results[definition.fieldName] = {
        fieldName: definition.fieldName,
        action,
        metadata: describedField(metadata, property),
        ...(warnings.length && { warnings }),
      };
    }
    return { fields: results };
  },

  providerError(connector, objectName, error) {
    if (error.status === 400 && /infer object type/i.test(error.providerMessage ?? '')) {
      return new ProviderError(connector.provider, `HubSpot has no object "${objectName}".`, {
        status: 404,
        retryable: false,
        providerMessage: error.providerMessage,
        request: error.request,
      });
    }
    return error;
  },
};
