import type { ProviderRecord, ReadPageInput, ReadPageResult } from '../connector.js';
import type { ConnectorHooks } from '../declarative/connector.js';
import type { HookContext } from '../declarative/context.js';
import { describedField } from '../declarative/field-metadata.js';
import { deletionsPageToken } from '../declarative/read.js';
import { renderJson } from '../declarative/template.js';
import { ConnectorInputError, ProviderError } from '../errors.js';
import { decodePageToken, encodePageToken } from '../page-token.js';
import { describedFieldNames } from './described-fields.js';
import type { CustomFieldDefinition, CustomFieldUpsertResult } from '../../schemas/object-metadata.js';

/**
 * HubSpot's quirks (the rest is `catalog/connectors/hubspot.json`):
 * - Windowed reads search, and a search answers at most 10,000 results per query (`after` beyond is
 *   refused), with offsets that shift when an earlier record is modified mid-read. So no offset is
 *   used: every page asks again from the newest modification time seen (GTE), leaving out the ids
 *   already returned at exactly that instant. A page whose records all share that instant starts a
 *   run of ties, read by id instead (modification time EQ that instant, `hs_object_id` GT the last
 *   id, sorted by id: a search takes one sort), so any number of records may share a millisecond.
 * - Reads name every described property when the caller chose none: HubSpot returns only a few
 *   default properties otherwise, and every field the metadata lists must arrive under its name.
 * - Full reads (no `since`) list (`GET /crm/v3/objects/{object}`), never search: the list has no cap.
 * - A windowed read that asks for deletions goes on with the declared listing of deletions
 *   (`archived=true`) once the search is done: archived records never appear in a search.
 * - Custom fields are properties: POST creates one, and a 409 (it exists) turns into a PATCH.
 * - "Unable to infer object type" (400) means HubSpot has no such object: a 404.
 */

/** HubSpot refuses search offsets past 10,000. */
export const hubSpotSearchResultCap = 10_000;

/** Token of a windowed read: where the next search starts, and what follows it. */
interface SearchToken extends Record<string, unknown> {
  m: 'search';
  o: string;
  /** Anchor (ms): modification times at or after it; in a run of ties, exactly it. */
  ts?: number;
  /** Ids returned earlier whose modification time equals `ts` (those not yet passed by `id`). */
  seen: string[];
  /** In a run of ties: the ids returned so far end at this one (`hs_object_id` GT it next). */
  tie?: boolean;
  id?: string;
  /** Exclusive upper bound (ms) of the read. */
  u?: number;
  /** Records per page asked for, the properties read, and the deletions to read after (from `ds`). */
  n?: number;
  f: string[];
  d?: boolean;
  ds?: number;
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

/** The properties a read asks for: those chosen, else every one the metadata describes. */
async function propertiesToRead(connector: HookContext, input: ReadPageInput): Promise<string[]> {
  return input.fields?.length ? input.fields : describedFieldNames(connector, input.objectName);
}

/** Whether HubSpot's id `a` sorts after `b` (numeric ids; any other id is kept, to be left out later). */
function idAfter(a: string, b: string): boolean {
  return /^\d+$/.test(a) && /^\d+$/.test(b) ? BigInt(a) > BigInt(b) : true;
}

/** One page of a windowed read, re-anchored as described above. */
async function searchPage(connector: HookContext, input: ReadPageInput): Promise<ReadPageResult> {
  const objectName = input.objectName;
  const object = connector.object(objectName);
  const listing = object.read!.incremental!;
  const modified = object.vars!.modified;
  const token: SearchToken = input.pageToken
    ? decodePageToken<SearchToken>(input.pageToken, connector.provider, objectName)
    : {
        m: 'search',
        o: objectName,
        ...(input.since && { ts: input.since.getTime() }),
        seen: [],
        ...(input.until && { u: input.until.getTime() }),
        ...(input.pageSize !== undefined && { n: input.pageSize }),
        f: [...new Set([...(await propertiesToRead(connector, input)), modified])],
        ...(input.includeDeleted && { d: true }),
        ...((input.deletedSince ?? input.since) && { ds: (input.deletedSince ?? input.since)!.getTime() }),
      };
  const limit = Math.max(1, Math.min(token.n ?? listing.pageSize.max, listing.pageSize.max));
  const anchor = token.ts;
  const values = {
    object: objectName,
    vars: object.vars,
    ...(anchor !== undefined && { since: new Date(anchor) }),
    ...(token.u !== undefined && { until: new Date(token.u) }),
    pageSize: limit,
    fields: token.f,
  };
  const window = token.tie
    ? [
        { propertyName: modified, operator: 'EQ', value: String(anchor) },
        ...(token.id !== undefined
          ? [{ propertyName: 'hs_object_id', operator: 'GT', value: token.id }]
          : []),
      ]
    : (['since', 'until'] as const)
        .filter((bound) => values[bound] !== undefined)
        .map((bound) => renderJson(listing.window![bound], values));
  const request = connector.request(listing.request, { ...values, window }, true);
  if (token.tie) {
    request.json = {
      ...(request.json as Record<string, unknown>),
      sorts: [{ propertyName: 'hs_object_id', direction: 'ASCENDING' }],
    };
  }
  const { body } = await connector.send(objectName, request);
  const page = body as SearchPage;
  const seen = new Set(token.seen);
  const records: ProviderRecord[] = page.results
    .filter((record) => !seen.has(String(record.id)))
    .map((record) => connector.record(object, record));
  const more =
    page.results.length > 0 && (Boolean(page.paging?.next) || page.results.length < (page.total ?? 0));

  let next: SearchToken | undefined;
  if (token.tie) {
    if (more) {
      // On among the ties, by id; ids returned before and not yet passed stay left out.
      const last = String(page.results[page.results.length - 1].id);
      const kept = token.seen.filter((id) => idAfter(id, last));
      next = { ...token, id: last, seen: kept };
    } else {
      // The run of ties is read: on from the next millisecond.
      const { tie: _tie, id: _id, ...rest } = token;
      next = { ...rest, ts: anchor! + 1, seen: [] };
      if (token.u !== undefined && next.ts! >= token.u) next = undefined;
    }
  } else if (more) {
    const times = page.results.map((record) => modifiedAt(record, modified));
    const last = times[times.length - 1];
    if (!Number.isFinite(last)) {
      throw new ProviderError(connector.provider, `HubSpot ${objectName} came back without ${modified}.`, {
        retryable: false,
      });
    }
    if (anchor === undefined || last > anchor) {
      // Re-anchor at the newest instant of this page; its ids there must not come back.
      const atLast = page.results
        .filter((_, index) => times[index] === last)
        .map((record) => String(record.id));
      next = { ...token, ts: last, seen: atLast };
    } else {
      // A whole page shares the anchor instant: read the run of ties by id.
      const atAnchor = [...seen, ...page.results.map((record) => String(record.id))];
      next = { ...token, tie: true, seen: [...new Set(atAnchor)] };
      delete next.id;
    }
  }
  if (next) return { records, nextPageToken: encodePageToken(next), done: false };
  // The changes are read: the deletions follow when the read asks for them.
  const deletions = token.d
    ? deletionsPageToken(objectName, object, {
        ...(token.u !== undefined && { until: new Date(token.u) }),
        ...(token.n !== undefined && { pageSize: token.n }),
        fields: token.f,
        ...(token.ds !== undefined && { deletedSince: new Date(token.ds) }),
      })
    : undefined;
  return deletions ? { records, nextPageToken: deletions, done: false } : { records, done: true };
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
    if (input.pageToken) return isSearchToken(input.pageToken) ? searchPage(connector, input) : declared();
    if (input.since) return searchPage(connector, input);
    // A full read lists (an `until` alone is kept by Ferry): every property unless some were chosen.
    if (input.fields?.length) return declared();
    return connector.readDeclaredPage({ ...input, fields: await propertiesToRead(connector, input) });
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
