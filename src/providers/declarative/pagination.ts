import type { Pagination } from '../../schemas/connector-declaration.js';
import { valueAt } from './json-pointer.js';

/**
 * Where a listing stands between pages, in each declared pagination style. Plain JSON: it travels
 * inside the connector's page token.
 */
export interface PageState {
  cursor?: string;
  /** The next page's URL as the provider gave it (nextUrl, linkHeader). */
  url?: string;
  offset?: number;
  page?: number;
  lastId?: string;
  /** The token a resumed listing starts from (a cursor pagination's `resume`: Google's sync token). */
  resume?: string;
}

export interface ListedPage {
  body: unknown;
  headers: Record<string, string>;
  /** The listed items, as the provider sent them. */
  items: unknown[];
  /** Ids of the items, in order (for `lastId`). */
  ids: string[];
  /** Records asked for per page. */
  pageSize: number;
}

export function firstPageState(pagination: Pagination): PageState {
  switch (pagination.style) {
    case 'offset':
      return { offset: 0 };
    case 'page':
      return { page: pagination.first ?? 1 };
    default:
      return {};
  }
}

/** The values a request template reads from the page state (`{{cursor}}`, `{{offset}}`...). */
export function pageValues(state: PageState): Record<string, unknown> {
  return {
    cursor: state.cursor,
    offset: state.offset,
    page: state.page,
    lastId: state.lastId,
    resume: state.resume,
  };
}

function present(value: unknown): value is string | number {
  return (typeof value === 'string' && value !== '') || typeof value === 'number';
}

/** `<https://…?page=3>; rel="next", <…>; rel="last"` → the next URL. */
export function nextLink(header: string | undefined): string | undefined {
  for (const part of header?.split(',') ?? []) {
    const match = /<([^>]+)>\s*;(?:[^;]*;)*\s*rel="?([^";]+)"?/i.exec(part.trim());
    if (match && match[2].split(/\s+/).includes('next')) return match[1];
  }
  return undefined;
}

/** A page short of its size is the last, where the provider gives no other sign. */
function shortPage(page: ListedPage): boolean {
  return page.items.length === 0 || page.items.length < page.pageSize;
}

/** The state after `page`, or undefined when no page follows. */
export function nextPageState(
  pagination: Pagination,
  state: PageState,
  page: ListedPage,
): PageState | undefined {
  const hasMore = (pointer: string | undefined) =>
    pointer === undefined ? undefined : valueAt(page.body, pointer) === true;
  switch (pagination.style) {
    case 'cursor': {
      const next = valueAt(page.body, pagination.next);
      if (!present(next) || hasMore(pagination.hasMore) === false || hasMore(pagination.last))
        return undefined;
      return { cursor: String(next) };
    }
    case 'nextUrl': {
      const next = valueAt(page.body, pagination.next);
      return typeof next === 'string' && next && !hasMore(pagination.last) ? { url: next } : undefined;
    }
    case 'linkHeader': {
      const next = nextLink(page.headers.link);
      return next ? { url: next } : undefined;
    }
    case 'offset': {
      const offset = (state.offset ?? 0) + page.items.length;
      const more = hasMore(pagination.hasMore);
      const total = pagination.total === undefined ? undefined : Number(valueAt(page.body, pagination.total));
      if (more === false || page.items.length === 0) return undefined;
      if (total !== undefined && !Number.isNaN(total) && offset >= total) return undefined;
      if (more === undefined && total === undefined && shortPage(page)) return undefined;
      return { offset };
    }
    case 'page': {
      const current = state.page ?? pagination.first ?? 1;
      const more = hasMore(pagination.hasMore);
      const items =
        pagination.totalItems === undefined ? undefined : Number(valueAt(page.body, pagination.totalItems));
      const pages =
        pagination.totalPages !== undefined
          ? Number(valueAt(page.body, pagination.totalPages))
          : items !== undefined && page.pageSize > 0
            ? Math.ceil(items / page.pageSize)
            : undefined;
      if (more === false || page.items.length === 0) return undefined;
      const lastPage = pages === undefined ? undefined : (pagination.first ?? 1) === 0 ? pages - 1 : pages;
      if (lastPage !== undefined && !Number.isNaN(lastPage) && current >= lastPage) return undefined;
      if (more === undefined && pages === undefined && shortPage(page)) return undefined;
      return { page: current + 1 };
    }
    case 'lastId': {
      if (!hasMore(pagination.hasMore) || !page.ids.length) return undefined;
      return { lastId: page.ids[page.ids.length - 1] };
    }
    case 'none':
      return undefined;
  }
}

/**
 * Where a listing that has ended would continue once more has changed: the cursor or next URL the
 * provider gives at the end of its stream (Zendesk's `after_url` with `end_of_stream`, OData's
 * `@odata.deltaLink` where the pagination names it `resume`), else the page just read, whose records
 * are then seen again (and recognised) next time. Undefined where the pagination names where the
 * position is and the last page gives none (a Dataverse table without change tracking).
 */
export function endPosition(
  pagination: Pagination,
  state: PageState,
  page: ListedPage,
): PageState | undefined {
  switch (pagination.style) {
    case 'cursor': {
      if (pagination.resume !== undefined) {
        const resume = valueAt(page.body, pagination.resume);
        return present(resume) ? { resume: String(resume) } : undefined;
      }
      const next = valueAt(page.body, pagination.next);
      return present(next) ? { cursor: String(next) } : state;
    }
    case 'nextUrl': {
      if (pagination.resume !== undefined) {
        const resume = valueAt(page.body, pagination.resume);
        return typeof resume === 'string' && resume ? { url: resume } : undefined;
      }
      const next = valueAt(page.body, pagination.next);
      return typeof next === 'string' && next ? { url: next } : state;
    }
    case 'linkHeader': {
      const next = nextLink(page.headers.link);
      return next ? { url: next } : state;
    }
    default:
      return state;
  }
}
