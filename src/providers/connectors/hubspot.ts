import type {
  CountInput,
  ProviderRecord,
  ReadPageInput,
  ReadPageResult,
  WriteInput,
  WriteResult,
} from '../connector.js';
import type { ConnectorCapabilities } from '../../schemas/capabilities.js';
import type {
  CustomFieldDefinition,
  CustomFieldUpsertResult,
  FieldMetadata,
  ObjectMetadata,
  UpsertCustomFieldsResult,
  ValueType,
} from '../../schemas/object-metadata.js';
import { ConnectorInputError, ProviderError } from '../errors.js';
import type { ProviderHttpRequest } from '../http.js';
import { BaseConnector } from './base.js';
import { decodePageToken, encodePageToken } from './page-token.js';

/**
 * HubSpot CRM v3 (https://developers.hubspot.com/docs/api/crm): records, properties and search.
 *
 * Reads
 * - Full reads (no `since`/`until`) list `GET /crm/v3/objects/{object}` with HubSpot's `after`
 *   cursor: no result cap, ordered by id.
 * - Windowed reads search `POST /crm/v3/objects/{object}/search`, filtered on the last-modified
 *   property (GTE since, LT until) and sorted by it ascending. Search answers at most 10,000 results
 *   per query (`after` beyond that is refused), and offsets shift when a record of an earlier page
 *   is modified mid-read. So every page re-anchors: the next page queries again from the newest
 *   modification time seen (GTE), skipping the ids already returned at exactly that instant. Offsets
 *   (`after`) are only used inside a run of records sharing one millisecond; more than 10,000 of
 *   those cannot be read and fail the read, non-retryably, with a message saying so.
 * - Contacts keep their modification time in `lastmodifieddate`, other objects in
 *   `hs_lastmodifieddate` (HubSpot's documented defaults per object).
 * Writes: `POST /crm/v3/objects/{object}`, `PATCH`/`DELETE .../{id}`.
 * Metadata: `GET /crm/v3/properties/{object}`. Custom fields: `POST /crm/v3/properties/{object}`,
 * then `PATCH .../{name}` when HubSpot answers 409 (the property exists).
 * Counts: the `total` of a one-record search. Subscriptions: not per connection at HubSpot (an app's
 * webhooks are configured once, for every account), so not supported here.
 */

interface HubSpotObject {
  id: string;
  properties: Record<string, unknown>;
  createdAt?: string;
  updatedAt?: string;
  archived?: boolean;
}

interface HubSpotPage {
  results: HubSpotObject[];
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
  options?: { label: string; value: string; hidden?: boolean; displayOrder?: number }[];
  hubspotDefined?: boolean;
  calculated?: boolean;
  hasUniqueValue?: boolean;
  modificationMetadata?: { readOnlyValue?: boolean; readOnlyDefinition?: boolean; archivable?: boolean };
}

interface HubSpotPropertyInput {
  name?: string;
  label: string;
  type: string;
  fieldType: string;
  groupName?: string;
  description?: string;
  options?: { label: string; value: string; displayOrder: number }[];
  hasUniqueValue?: boolean;
}

/** Token of a full read: HubSpot's own cursor. */
interface ListToken extends Record<string, unknown> {
  m: 'list';
  o: string;
  a: string;
}

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

/** HubSpot refuses search offsets past 10,000. */
export const hubSpotSearchResultCap = 10_000;
const maxSearchPageSize = 200;
const maxListPageSize = 100;

const objectDisplayNames: Record<string, string> = {
  contacts: 'Contacts',
  companies: 'Companies',
  deals: 'Deals',
  tickets: 'Tickets',
  products: 'Products',
  line_items: 'Line items',
  quotes: 'Quotes',
  calls: 'Calls',
  emails: 'Emails',
  meetings: 'Meetings',
  notes: 'Notes',
  tasks: 'Tasks',
};

/** The property holding a record's last modification time. */
export function hubSpotModifiedProperty(objectName: string): string {
  return objectName === 'contacts' ? 'lastmodifieddate' : 'hs_lastmodifieddate';
}

/** The property group new custom properties go in: `contactinformation`, `companyinformation`... */
export function hubSpotDefaultGroup(objectName: string): string {
  const singular: Record<string, string> = {
    companies: 'company',
    line_items: 'lineitem',
  };
  return `${singular[objectName] ?? objectName.replace(/s$/, '')}information`;
}

function valueTypeOf(property: HubSpotProperty): ValueType {
  switch (property.type) {
    case 'string':
    case 'phone_number':
      return property.fieldType === 'file' ? 'other' : 'string';
    case 'number':
      return 'float';
    case 'bool':
      return 'boolean';
    case 'date':
      return 'date';
    case 'datetime':
      return 'datetime';
    case 'enumeration':
      if (property.fieldType === 'booleancheckbox') return 'boolean';
      return property.fieldType === 'checkbox' ? 'multiSelect' : 'singleSelect';
    default:
      return 'other';
  }
}

function fieldMetadata(property: HubSpotProperty): FieldMetadata {
  return {
    fieldName: property.name,
    displayName: property.label || property.name,
    valueType: valueTypeOf(property),
    providerType: property.type,
    readOnly: property.modificationMetadata?.readOnlyValue ?? property.calculated ?? false,
    isCustom: property.hubspotDefined !== true,
    // HubSpot properties have no required flag; requiredness lives on forms and pipelines.
    isRequired: false,
    ...(property.options?.length && {
      values: property.options.map((option) => ({ value: option.value, displayValue: option.label })),
    }),
  };
}

function modifiedAt(record: HubSpotObject, property: string): number {
  const raw = record.properties?.[property] ?? record.updatedAt;
  const ms = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : Date.parse(String(raw));
  return ms;
}

function toRecord(record: HubSpotObject): ProviderRecord {
  return {
    id: String(record.id),
    ...(record.updatedAt && { updatedAt: record.updatedAt }),
    raw: record as unknown as Record<string, unknown>,
  };
}

const hubSpotPropertyName = /^[a-z][a-z0-9_]*$/;

export class HubSpotConnector extends BaseConnector {
  readonly capabilities: Readonly<ConnectorCapabilities> = Object.freeze({
    read: true,
    write: true,
    delete: true,
    objectMetadata: true,
    customFields: true,
    subscribe: false,
    count: true,
    proxy: true,
  });

  override async readPage(input: ReadPageInput): Promise<ReadPageResult> {
    const token = input.pageToken
      ? decodePageToken<ListToken | SearchToken>(input.pageToken, this.provider, input.objectName)
      : undefined;
    if (token?.m === 'list' || (!token && !input.since && !input.until)) {
      return this.listPage(input, token as ListToken | undefined);
    }
    return this.searchPage(input, token as SearchToken | undefined);
  }

  override async write(input: WriteInput): Promise<WriteResult> {
    const base = `/crm/v3/objects/${encodeURIComponent(input.objectName)}`;
    if (input.type === 'create') {
      const { body } = await this.http.json<HubSpotObject>({
        method: 'POST',
        path: base,
        json: {
          properties: this.writeValues(input),
          ...(input.associations?.length && { associations: input.associations }),
        },
      });
      return { recordId: String(body.id), data: body as unknown as Record<string, unknown> };
    }
    const id = this.targetRecordId(input);
    if (input.associations?.length) {
      throw this.unsupported('associations', 'HubSpot takes associations only when a record is created.');
    }
    if (input.type === 'update') {
      const { body } = await this.http.json<HubSpotObject>({
        method: 'PATCH',
        path: `${base}/${encodeURIComponent(id)}`,
        json: { properties: this.writeValues(input) },
        idempotent: true,
      });
      return { recordId: id, data: body as unknown as Record<string, unknown> };
    }
    await this.http.json({ method: 'DELETE', path: `${base}/${encodeURIComponent(id)}` });
    return { recordId: id };
  }

  override async listObjectMetadata(objectName: string): Promise<ObjectMetadata> {
    const properties = await this.properties(objectName);
    return {
      name: objectName,
      displayName:
        objectDisplayNames[objectName] ??
        objectName.replace(/_/g, ' ').replace(/^\w/, (c) => c.toUpperCase()),
      fields: Object.fromEntries(properties.map((property) => [property.name, fieldMetadata(property)])),
    };
  }

  override async upsertCustomFields(
    objectName: string,
    fields: CustomFieldDefinition[],
  ): Promise<UpsertCustomFieldsResult> {
    // Check every definition before the first call, so a bad one changes nothing.
    const inputs = fields.map((definition) => ({
      definition,
      ...this.propertyInput(objectName, definition),
    }));
    const results: Record<string, CustomFieldUpsertResult> = {};
    const path = `/crm/v3/properties/${encodeURIComponent(objectName)}`;
    for (const { definition, input, warnings } of inputs) {
      const created = await this.http.send({ method: 'POST', path, json: input });
      let property: HubSpotProperty;
      let action: CustomFieldUpsertResult['action'] = 'create';
      if (created.status === 409) {
        const { name: _name, groupName: _group, hasUniqueValue, ...changes } = input;
        if (hasUniqueValue) warnings.push('HubSpot cannot make an existing property unique.');
        const updated = await this.http.json<HubSpotProperty>({
          method: 'PATCH',
          path: `${path}/${encodeURIComponent(definition.fieldName)}`,
          json: changes,
          idempotent: true,
        });
        property = updated.body;
        action = 'update';
      } else if (created.status >= 200 && created.status < 300) {
        property = created.body as HubSpotProperty;
      } else {
        throw this.notFoundObject(objectName, this.http.errorFor({ method: 'POST', path }, created));
      }
      results[definition.fieldName] = {
        fieldName: definition.fieldName,
        action,
        metadata: fieldMetadata(property),
        ...(warnings.length && { warnings }),
      };
    }
    return { fields: results };
  }

  override async estimateCount(input: CountInput): Promise<number | undefined> {
    const { body } = await this.search(input.objectName, {
      filterGroups: this.windowFilters(input.objectName, input.since?.getTime(), input.until?.getTime()),
      properties: ['hs_object_id'],
      limit: 1,
    });
    return body.total;
  }

  private async listPage(input: ReadPageInput, token: ListToken | undefined): Promise<ReadPageResult> {
    const { body } = await this.request<HubSpotPage>(input.objectName, {
      method: 'GET',
      path: `/crm/v3/objects/${encodeURIComponent(input.objectName)}`,
      query: {
        limit: Math.max(1, Math.min(input.pageSize, maxListPageSize)),
        after: token?.a,
        properties: input.fields?.length ? input.fields.join(',') : undefined,
        archived: 'false',
      },
    });
    const after = body.paging?.next?.after;
    return {
      records: body.results.map(toRecord),
      ...(after && { nextPageToken: encodePageToken({ m: 'list', o: input.objectName, a: after }) }),
      done: !after,
    };
  }

  private async searchPage(input: ReadPageInput, token: SearchToken | undefined): Promise<ReadPageResult> {
    const objectName = input.objectName;
    const modified = hubSpotModifiedProperty(objectName);
    const limit = Math.max(1, Math.min(input.pageSize, maxSearchPageSize));
    const anchor = token ? token.ts : input.since?.getTime();
    const until = token ? token.u : input.until?.getTime();
    const offset = token?.after ?? 0;
    const seen = new Set(token?.seen ?? []);
    if (offset + limit > hubSpotSearchResultCap) throw this.tooManyTies(objectName, anchor);

    const { body } = await this.search(objectName, {
      filterGroups: this.windowFilters(objectName, anchor, until),
      sorts: [{ propertyName: modified, direction: 'ASCENDING' }],
      properties: [...new Set([...(input.fields ?? []), modified])],
      limit,
      ...(offset > 0 && { after: String(offset) }),
    });
    const records = body.results.filter((record) => !seen.has(String(record.id))).map(toRecord);
    // At the 10,000 cap HubSpot stops offering a next page although `total` says more match.
    const more = Boolean(body.paging?.next) || offset + body.results.length < (body.total ?? 0);
    if (!more || body.results.length === 0) return { records, done: true };

    const times = body.results.map((record) => modifiedAt(record, modified));
    const last = times[times.length - 1];
    let next: SearchToken;
    if (Number.isFinite(last) && (anchor === undefined || last > anchor)) {
      // Re-anchor at the newest instant of this page; its ids there must not come back.
      const atLast = body.results
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
        after: offset + body.results.length,
      };
      if (next.after + limit > hubSpotSearchResultCap) throw this.tooManyTies(objectName, anchor);
    }
    return { records, nextPageToken: encodePageToken(next), done: false };
  }

  private windowFilters(objectName: string, since: number | undefined, until: number | undefined) {
    const propertyName = hubSpotModifiedProperty(objectName);
    const filters = [
      ...(since !== undefined ? [{ propertyName, operator: 'GTE', value: String(since) }] : []),
      ...(until !== undefined ? [{ propertyName, operator: 'LT', value: String(until) }] : []),
    ];
    return filters.length ? [{ filters }] : [];
  }

  private search(objectName: string, body: Record<string, unknown>) {
    return this.request<HubSpotPage>(objectName, {
      method: 'POST',
      path: `/crm/v3/objects/${encodeURIComponent(objectName)}/search`,
      json: body,
      idempotent: true, // a search changes nothing
    });
  }

  private async properties(objectName: string): Promise<HubSpotProperty[]> {
    const { body } = await this.request<{ results: HubSpotProperty[] }>(objectName, {
      method: 'GET',
      path: `/crm/v3/properties/${encodeURIComponent(objectName)}`,
    });
    return body.results;
  }

  /** A JSON request about one object, with HubSpot's "unknown object type" answer turned into a 404. */
  private async request<T>(objectName: string, req: ProviderHttpRequest) {
    try {
      return await this.http.json<T>(req);
    } catch (error) {
      throw this.notFoundObject(objectName, error);
    }
  }

  /** HubSpot answers 400 "Unable to infer object type from: x" for an object it does not have. */
  private notFoundObject(objectName: string, error: unknown): unknown {
    if (
      error instanceof ProviderError &&
      error.status === 400 &&
      /infer object type/i.test(error.providerMessage ?? '')
    ) {
      return new ProviderError(this.provider, `HubSpot has no object "${objectName}".`, {
        status: 404,
        retryable: false,
        providerMessage: error.providerMessage,
        request: error.request,
      });
    }
    return error;
  }

  private tooManyTies(objectName: string, anchor: number | undefined): ProviderError {
    const at = anchor === undefined ? 'one instant' : new Date(anchor).toISOString();
    return new ProviderError(
      this.provider,
      `More than ${hubSpotSearchResultCap} HubSpot ${objectName} share the modification time ${at}; HubSpot search cannot page past ${hubSpotSearchResultCap} results of one query. Read this window without "since" (a full read) instead.`,
      { retryable: false },
    );
  }

  /** A custom-field definition as a HubSpot property; what HubSpot cannot honour becomes a warning. */
  private propertyInput(
    objectName: string,
    definition: CustomFieldDefinition,
  ): { input: HubSpotPropertyInput; warnings: string[] } {
    if (!hubSpotPropertyName.test(definition.fieldName)) {
      throw new ConnectorInputError(
        `HubSpot property names are lower-case letters, digits and underscores, starting with a letter; "${definition.fieldName}" is not.`,
        this.provider,
      );
    }
    const warnings: string[] = [];
    const { stringOptions, numericOptions } = definition;
    const options = (values: string[]) =>
      values.map((value, displayOrder) => ({ label: value, value, displayOrder }));
    const input: HubSpotPropertyInput = {
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
          if (stringOptions?.values?.length)
            warnings.push('HubSpot text properties keep no suggested values.');
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
}
