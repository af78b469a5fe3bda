import type { SearchInput, SearchPageResult } from '../connector.js';
import { ConnectorInputError } from '../errors.js';
import { decodePageToken, encodePageToken } from '../page-token.js';
import type { SearchDeclaration } from '../../schemas/connector-declaration.js';
import type { DeclaredContext } from './context.js';
import { firstValueAt, valueAt } from './json-pointer.js';
import { firstPageState, nextPageState, pageValues, type PageState } from './pagination.js';
import { renderJson, type TemplateValues } from './template.js';

/** Searches as a declaration says: records matching equality filters, one page at a time. */

/** A search's position between pages, with the query it continues. */
interface SearchToken extends Record<string, unknown> {
  o: string;
  k: 'search';
  s: PageState;
  w: { fieldName: string; value: unknown }[];
  n: number;
  f?: string[];
}

/** One page of records matching every filter, as the object's `search` declares. */
export async function searchDeclared(
  connector: DeclaredContext,
  input: SearchInput,
): Promise<SearchPageResult> {
  if (!connector.capabilities.search) throw connector.unsupported('search');
  const object = connector.object(input.objectName);
  const search = object.search;
  if (!search)
    throw connector.unsupported(
      'search',
      `Ferry cannot search ${input.objectName} records at "${connector.provider}".`,
    );
  const token = input.pageToken
    ? decodePageToken<SearchToken>(input.pageToken, connector.provider, input.objectName)
    : undefined;
  if (token && token.k !== 'search') {
    throw new ConnectorInputError(
      'The page token was not issued by a search; pass back nextPageToken unchanged.',
      connector.provider,
    );
  }
  const filters = token?.w ?? input.filters;
  const fields = token ? token.f : input.fields;
  const pageSize = token?.n ?? Math.max(1, Math.min(input.pageSize, search.pageSize.max));
  const state = token?.s ?? firstPageState(search.pagination);
  const base = connector.templateValues(input.objectName, object);
  const values: TemplateValues = {
    ...base,
    filters: searchFilters(connector, input.objectName, search, filters, base),
    pageSize,
    ...(fields?.length && { fields }),
    ...pageValues(state),
  };
  const request = state.url
    ? {
        ...connector.request({ ...search.request, method: 'GET', query: {}, body: undefined }, values, true),
        path: connector.nextPageUrl(state.url, search.pagination),
      }
    : connector.request(search.request, values, true);
  const response = await connector.send(input.objectName, request);
  const listed = valueAt(response.body, search.records);
  const items = Array.isArray(listed) ? listed : [];
  const next = nextPageState(search.pagination, state, {
    body: response.body,
    headers: response.headers,
    items,
    ids: items.map((item) => String(firstValueAt(item, object.id ?? '/id'))),
    pageSize,
  });
  const records = items.map((item) => connector.record(object, item, { record: search.record }));
  if (!next) return { records };
  const nextToken: SearchToken = {
    o: input.objectName,
    k: 'search',
    s: next,
    w: filters,
    n: pageSize,
    ...(fields?.length && { f: fields }),
  };
  return { records, nextPageToken: encodePageToken(nextToken) };
}

/**
 * The filters as the request carries them: the `equals` clauses (a list, or joined), or the
 * `members` of each filter merged into one object. A field without members cannot be searched,
 * and two filters writing the same member are refused: the provider would keep only one.
 */
export function searchFilters(
  connector: DeclaredContext,
  objectName: string,
  search: SearchDeclaration,
  filters: { fieldName: string; value: unknown }[],
  base: TemplateValues,
): unknown {
  const valuesOf = (filter: { fieldName: string; value: unknown }) => ({
    ...base,
    field: filter.fieldName,
    value: filter.value,
  });
  const members = search.members;
  if (!members) {
    const clauses = filters.map((filter) => renderJson(search.equals, valuesOf(filter)));
    return search.join === undefined ? clauses : clauses.map(String).join(search.join);
  }
  const merged: Record<string, unknown> = {};
  for (const filter of filters) {
    if (!Object.hasOwn(members, filter.fieldName)) {
      throw new ConnectorInputError(
        `"${connector.provider}" cannot search ${objectName} by "${filter.fieldName}"; it searches by ${Object.keys(
          members,
        )
          .map((name) => `"${name}"`)
          .join(', ')}.`,
        connector.provider,
      );
    }
    const rendered = renderJson(members[filter.fieldName], valuesOf(filter)) as Record<string, unknown>;
    for (const [key, value] of Object.entries(rendered)) {
      if (Object.hasOwn(merged, key)) {
        throw new ConnectorInputError(
          `"${connector.provider}" takes one filter on "${key}" when searching ${objectName}; "${filter.fieldName}" would be a second.`,
          connector.provider,
        );
      }
      merged[key] = value;
    }
  }
  return merged;
}
