import type {
  ConnectorDeclaration,
  DeclaredRequest,
  Listing,
  ObjectDeclaration,
  Predicate,
  SearchDeclaration,
  WebhooksDeclaration,
} from '../../schemas/connector-declaration.js';
import { isKnownFormat, placeholdersOf, timeFormats, type Placeholder } from '../declarative/template.js';

/**
 * What a declaration's schema cannot say, checked at start: placeholders known where they are used,
 * the pagination's placeholder present, `{{id}}` in update and delete paths, `vars` defined, patterns
 * that compile, webhook requests that name only what a registration knows.
 */

const readPlaceholders = [
  'since',
  'until',
  'window',
  'pageSize',
  'cursor',
  'offset',
  'page',
  'lastId',
  'fields',
  'includeDeleted',
  'parent',
  'resume',
];
const searchPlaceholders = ['filters', 'pageSize', 'cursor', 'offset', 'page', 'lastId', 'fields'];
const pagePlaceholder: Record<string, string | undefined> = {
  cursor: 'cursor',
  offset: 'offset',
  page: 'page',
  lastId: 'lastId',
};

/** An object's declaration with the provider's defaults under it, member by member (`vars` merged). */
export function effectiveObject(
  declaration: ConnectorDeclaration,
  objectName: string,
): ObjectDeclaration | undefined {
  const own = Object.hasOwn(declaration.objects, objectName)
    ? declaration.objects[objectName]
    : Object.hasOwn(declaration.objects, '*')
      ? declaration.objects['*']
      : undefined;
  if (!own) return undefined;
  const defaults = declaration.defaults ?? {};
  return { ...defaults, ...own, vars: { ...defaults.vars, ...own.vars } };
}

export class Checker {
  readonly problems: string[] = [];
  constructor(
    private readonly provider: string,
    private readonly declared: ObjectDeclaration,
  ) {}

  private problem(field: string, detail: string): void {
    this.problems.push(`${this.provider}: ${field}: ${detail}`);
  }

  /** Placeholders of `template` must be among `allowed`, with known formats and defined vars. */
  placeholders(field: string, template: unknown, allowed: readonly string[]): Placeholder[] {
    const found = placeholdersOf(template);
    for (const { name, format } of found) {
      if (name.startsWith('connection.')) {
        // Connection metadata is only known per connection; a missing value fails that request.
      } else if (name.startsWith('vars.')) {
        if (!Object.hasOwn(this.declared.vars ?? {}, name.slice(5))) {
          this.problem(field, `{{${name}}} names no entry of the object's vars`);
        }
      } else if (name !== 'object' && !allowed.includes(name)) {
        this.problem(
          field,
          `{{${name}}} is not known here (known: object, vars.<name>, connection.<name>, ${allowed.join(', ')})`,
        );
      }
      if (format !== undefined && !isKnownFormat(format)) {
        this.problem(
          field,
          `"${format}" is not a known format (steps joined by |: ${[...timeFormats, 'json', 'string', 'join:<separator>', 'shift:<seconds>'].join(', ')})`,
        );
      }
    }
    return found;
  }

  request(field: string, request: DeclaredRequest, allowed: readonly string[]): Placeholder[] {
    return [
      ...this.placeholders(`${field}.path`, request.path, allowed),
      ...this.placeholders(`${field}.query`, request.query ?? {}, allowed),
      ...this.placeholders(`${field}.headers`, request.headers ?? {}, allowed),
      ...this.placeholders(`${field}.body`, request.body ?? {}, allowed),
    ];
  }

  /** A predicate's `matches` patterns must compile. */
  predicate(field: string, predicate: Predicate | undefined): void {
    if (predicate === undefined || typeof predicate !== 'object') return;
    if ('not' in predicate) this.predicate(`${field}.not`, predicate.not);
    if ('anyOf' in predicate)
      predicate.anyOf.forEach((inner, i) => this.predicate(`${field}.anyOf.${i}`, inner));
    if ('allOf' in predicate)
      predicate.allOf.forEach((inner, i) => this.predicate(`${field}.allOf.${i}`, inner));
    if ('matches' in predicate) {
      try {
        new RegExp(predicate.matches.pattern);
      } catch (error) {
        this.problem(`${field}.matches.pattern`, (error as Error).message);
      }
    }
  }

  listing(field: string, listing: Listing): void {
    const used = new Set(
      this.request(`${field}.request`, listing.request, readPlaceholders).map((p) => p.name),
    );
    const needed = pagePlaceholder[listing.pagination.style];
    // With `following`, only the later pages' request continues from the cursor.
    if (needed && !used.has(needed) && !listing.following) {
      this.problem(
        `${field}.pagination`,
        `style ${listing.pagination.style} needs {{${needed}}} in the request`,
      );
    }
    for (const [style, placeholder] of Object.entries(pagePlaceholder)) {
      if (placeholder && style !== listing.pagination.style && used.has(placeholder)) {
        this.problem(
          `${field}.request`,
          `{{${placeholder}}} is used but the pagination style is ${listing.pagination.style}`,
        );
      }
    }
    if (listing.window) {
      if (!used.has('window'))
        this.problem(`${field}.window`, 'is declared but the request never uses {{window}}');
      const since = this.placeholders(`${field}.window.since`, listing.window.since ?? '', ['since']);
      const until = this.placeholders(`${field}.window.until`, listing.window.until ?? '', ['until']);
      if (listing.window.since !== undefined && !since.some((p) => p.name === 'since'))
        this.problem(`${field}.window.since`, 'must use {{since}}');
      if (listing.window.until !== undefined && !until.some((p) => p.name === 'until'))
        this.problem(`${field}.window.until`, 'must use {{until}}');
      if (listing.window.prefix !== undefined && listing.window.join === undefined)
        this.problem(`${field}.window.prefix`, 'needs join: the window is then text');
    } else if (used.has('window')) {
      this.problem(`${field}.request`, 'uses {{window}} but no window is declared');
    }
    this.predicate(`${field}.deleted`, listing.deleted);
    this.changes(field, listing, used);
    if (listing.following) {
      const following = new Set(
        this.request(`${field}.following.request`, listing.following.request, readPlaceholders).map(
          (p) => p.name,
        ),
      );
      const cursor = pagePlaceholder[listing.pagination.style];
      if (!cursor || !following.has(cursor))
        this.problem(`${field}.following.request`, 'must continue from the first page, with its {{cursor}}');
      if (listing.following.pagination.style !== listing.pagination.style)
        this.problem(
          `${field}.following.pagination`,
          `must page the way the first page does (style ${listing.pagination.style})`,
        );
    }
    if (listing.restartFromNewest) {
      if (!['page', 'offset'].includes(listing.pagination.style))
        this.problem(`${field}.restartFromNewest`, 'needs pagination by page or offset');
      if (!used.has('since') && listing.window?.since === undefined)
        this.problem(`${field}.restartFromNewest`, 'needs {{since}} in the request');
      if (listing.following || listing.newestFirst || listing.resume)
        this.problem(
          `${field}.restartFromNewest`,
          'goes with neither following, newestFirst nor resume: the walk restarts from its own request',
        );
    }
    if (listing.resumeRefused && !listing.resume)
      this.problem(
        `${field}.resumeRefused`,
        'names statuses refusing a resume token: the listing must resume',
      );
    if (listing.pageSize.min !== undefined && listing.pageSize.min > listing.pageSize.max) {
      this.problem(`${field}.pageSize`, 'min is larger than max');
    }
  }

  /**
   * A listing that filters by modification time states how its window behaves (`changes`), and
   * one that resumes from its own cursor pages by a cursor or a URL.
   */
  changes(field: string, listing: Listing, used: ReadonlySet<string>): void {
    const windowed =
      used.has('since') ||
      used.has('until') ||
      (listing.window !== undefined && used.has('window')) ||
      listing.newestFirst === true ||
      listing.oldestFirst === true;
    if (windowed && !listing.changes) {
      this.problem(
        `${field}.changes`,
        'a listing filtered by time must state its precision, its bounds and its lag (changes: {precision, since, until, lagSeconds})',
      );
    }
    if (listing.resume && !['cursor', 'nextUrl', 'linkHeader'].includes(listing.pagination.style)) {
      this.problem(`${field}.resume`, `style ${listing.pagination.style} leaves no position to resume from`);
    }
  }

  /**
   * A change feed walks from its token (`{{resume}}`) by its cursor, and its last page says where the
   * next walk starts (the cursor pagination's `resume`); its start asks nothing of a read.
   */
  feed(field: string, feed: NonNullable<NonNullable<ObjectDeclaration['read']>['feed']>): void {
    this.request(`${field}.start.request`, feed.start.request, []);
    const used = new Set(this.request(`${field}.request`, feed.request, readPlaceholders).map((p) => p.name));
    if (!used.has('resume')) this.problem(`${field}.request`, 'must start from the token, {{resume}}');
    for (const name of ['since', 'until', 'window'])
      if (used.has(name))
        this.problem(`${field}.request`, `{{${name}}}: a feed goes by its token, not by time`);
    if (feed.pagination.style !== 'cursor' || feed.pagination.resume === undefined)
      this.problem(
        `${field}.pagination`,
        'must be a cursor pagination naming where the next token is (resume)',
      );
    else if (!used.has('cursor'))
      this.problem(`${field}.pagination`, 'style cursor needs {{cursor}} in the request');
  }

  /** A readable object says how deletions are revealed; `marked` needs a mark, `listing` a listing. */
  deletions(prefix: string, read: NonNullable<ObjectDeclaration['read']>): void {
    const deletions = read.deletions;
    if (read.fullRead) {
      // Deletions are inferred from complete walks; a walk filtered by time would infer wrongly.
      if (deletions || read.incremental || read.feed)
        this.problem(
          `${prefix}.read.fullRead`,
          'infers deletions and walks `list` only: no deletions, no incremental, no feed',
        );
      const used = placeholdersOf(read.list.request).map((placeholder) => placeholder.name);
      if (['since', 'until', 'window'].some((name) => used.includes(name)))
        this.problem(`${prefix}.read.fullRead`, 'walks the whole list: its request cannot filter by time');
      return;
    }
    if (!deletions) {
      this.problem(
        `${prefix}.read.deletions`,
        'a readable object must say how its provider reveals deletions (style marked, listing or none with a reason)',
      );
      return;
    }
    if (deletions.style === 'marked') {
      if (deletions.list) this.listing(`${prefix}.read.deletions.list`, deletions.list);
      const listing = deletions.list ?? read.incremental ?? read.list;
      if (this.declared.deleted === undefined && listing.deleted === undefined && !read.feed?.deleted)
        this.problem(
          `${prefix}.read.deletions`,
          "marked deletions need the object's deleted pointer, the listing's deleted predicate or the feed's deleted items",
        );
    } else if (deletions.style === 'listing') {
      this.listing(`${prefix}.read.deletions.listing`, deletions.listing);
    }
  }

  /** A search: its filter uses both `{{field}}` and `{{value}}`, its request `{{filters}}` and its page placeholder. */
  search(field: string, search: SearchDeclaration): void {
    if ((search.equals === undefined) === (search.members === undefined)) {
      this.problem(field, 'needs exactly one of equals and members');
    } else if (search.equals !== undefined) {
      const filter = this.placeholders(`${field}.equals`, search.equals, ['field', 'value']).map(
        (p) => p.name,
      );
      for (const name of ['field', 'value']) {
        if (!filter.includes(name)) this.problem(`${field}.equals`, `must use {{${name}}}`);
      }
    } else {
      if (search.join !== undefined) this.problem(`${field}.join`, 'members are merged, not joined');
      for (const [name, template] of Object.entries(search.members ?? {})) {
        const member = this.placeholders(`${field}.members.${name}`, template, ['field', 'value']);
        if (!member.some((p) => p.name === 'value'))
          this.problem(`${field}.members.${name}`, 'must use {{value}}');
      }
      if (!spreadsFilters(search.request.body) && search.request.query?.['...'] !== '{{filters}}') {
        this.problem(
          `${field}.request`,
          'members need the filters spread into the body or query: "...": "{{filters}}"',
        );
      }
    }
    const used = new Set(
      this.request(`${field}.request`, search.request, searchPlaceholders).map((p) => p.name),
    );
    if (!used.has('filters')) this.problem(`${field}.request`, 'must send the filters, {{filters}}');
    const needed = pagePlaceholder[search.pagination.style];
    if (needed && !used.has(needed)) {
      this.problem(
        `${field}.pagination`,
        `style ${search.pagination.style} needs {{${needed}}} in the request`,
      );
    }
  }

  check(prefix: string): void {
    const object = this.declared;
    if (object.read) {
      this.listing(`${prefix}.read.list`, object.read.list);
      if (object.read.incremental) this.listing(`${prefix}.read.incremental`, object.read.incremental);
      if (object.read.feed) this.feed(`${prefix}.read.feed`, object.read.feed);
      for (const [name, declared] of [
        ['list', object.read.list],
        ['incremental', object.read.incremental],
        ['feed', object.read.feed],
      ] as const) {
        if (declared?.expand && !object.read.get)
          this.problem(
            `${prefix}.read.${name}.expand`,
            'reads each stub through read.get, which is not declared',
          );
      }
      this.deletions(prefix, object.read);
      if (object.read.get) {
        // `{{fields}}`: the fields a read chose, when it reads stubs through the get (`expand`).
        const used = this.request(`${prefix}.read.get.request`, object.read.get.request, ['id', 'fields']);
        if (!used.some((p) => p.name === 'id')) {
          this.problem(`${prefix}.read.get.request`, 'must address the record with {{id}}');
        }
      }
      if (object.read.count) {
        this.request(`${prefix}.read.count.request`, object.read.count.request, ['since', 'until', 'window']);
      }
    }
    for (const type of ['create', 'update', 'delete'] as const) {
      const operation = object.write?.[type];
      if (!operation) continue;
      const used = this.request(`${prefix}.write.${type}.request`, operation.request, [
        'id',
        'record',
        'associations',
        'idempotencyKey',
      ]);
      if (type !== 'create' && !used.some((p) => p.name === 'id')) {
        this.problem(`${prefix}.write.${type}.request`, `a ${type} must address the record with {{id}}`);
      }
      if (operation.idHeader) {
        try {
          new RegExp(operation.idHeader.pattern);
        } catch (error) {
          this.problem(`${prefix}.write.${type}.idHeader.pattern`, (error as Error).message);
        }
      }
    }
    if (object.search) this.search(`${prefix}.search`, object.search);
    if (object.metadata) {
      this.request(`${prefix}.metadata.request`, object.metadata.request, ['cursor', 'offset', 'page']);
      for (const name of [
        'where',
        'readOnly',
        'required',
        'custom',
        'active',
        'creatable',
        'updatable',
      ] as const) {
        this.predicate(`${prefix}.metadata.${name}`, object.metadata[name]);
      }
      if ((object.metadata.creatable === undefined) !== (object.metadata.updatable === undefined))
        this.problem(`${prefix}.metadata`, 'creatable and updatable go together');
      if (object.metadata.creatable !== undefined && object.metadata.readOnly !== undefined)
        this.problem(`${prefix}.metadata.readOnly`, 'creatable and updatable say it already');
    }
  }
}

/** Whether a body template spreads `{{filters}}` into one of its objects (`"...": "{{filters}}"`). */
function spreadsFilters(template: unknown): boolean {
  if (Array.isArray(template)) return template.some(spreadsFilters);
  if (!template || typeof template !== 'object') return false;
  return Object.entries(template).some(
    ([key, value]) => (key === '...' && value === '{{filters}}') || spreadsFilters(value),
  );
}

function patternProblem(field: string, pattern: string | undefined): string | undefined {
  if (pattern === undefined) return undefined;
  try {
    return new RegExp(pattern).source.includes('(') ? undefined : `${field}: needs a group, the value`;
  } catch (error) {
    return `${field}: ${(error as Error).message}`;
  }
}

/** The requests that register and remove a subscription: the placeholders each may use. */
function registrationProblems(
  declaration: ConnectorDeclaration,
  webhooks: WebhooksDeclaration,
  create: NonNullable<WebhooksDeclaration['create']>,
  remove: NonNullable<WebhooksDeclaration['delete']>,
): string[] {
  const problems: string[] = [];
  const { provider } = declaration;
  const registering = [
    'webhookUrl',
    'events',
    ...(webhooks.ferrySecret ? ['secret'] : []),
    ...(webhooks.renewal ? ['expiresAt'] : []),
  ];
  for (const name of Object.keys(webhooks.objects)) {
    const object = effectiveObject(declaration, name);
    if (!object) continue;
    const checker = new Checker(provider, object);
    const creating = create.perEvent ? [...registering, 'event'] : registering;
    const used = checker.request('webhooks.create.request', create.request, creating);
    if (create.perEvent && !used.some((placeholder) => placeholder.name === 'event'))
      checker.problems.push(`${provider}: webhooks.create.request: perEvent needs {{event}} sent`);
    if (!used.some((placeholder) => placeholder.name === 'webhookUrl'))
      checker.problems.push(`${provider}: webhooks.create.request: must send {{webhookUrl}}`);
    if (webhooks.ferrySecret && !used.some((placeholder) => placeholder.name === 'secret'))
      checker.problems.push(`${provider}: webhooks.create.request: ferrySecret needs {{secret}} sent`);
    if (webhooks.update) {
      checker.request('webhooks.update.request', webhooks.update.request, [...registering, 'subscriptionId']);
    }
    problems.push(...checker.problems);
  }
  const anyObject = new Checker(provider, declaration.defaults ?? {});
  const deleting = anyObject.request('webhooks.delete.request', remove.request, ['subscriptionId']);
  if (!deleting.some((placeholder) => placeholder.name === 'subscriptionId'))
    anyObject.problems.push(`${provider}: webhooks.delete.request: must address it with {{subscriptionId}}`);
  if (webhooks.secret) {
    anyObject.request('webhooks.secret.request', webhooks.secret.request, ['subscriptionId', ...registering]);
  }
  if (webhooks.renewal) {
    const renewing = anyObject.request('webhooks.renewal.request', webhooks.renewal.request, [
      'subscriptionId',
      'expiresAt',
    ]);
    if (!renewing.some((placeholder) => placeholder.name === 'subscriptionId'))
      anyObject.problems.push(
        `${provider}: webhooks.renewal.request: must address it with {{subscriptionId}}`,
      );
  }
  problems.push(...new Set(anyObject.problems));
  return problems;
}

/** A declaration's `webhooks`: placeholders each request may use, patterns that compile, known objects. */
export function webhookProblems(declaration: ConnectorDeclaration, webhooks: WebhooksDeclaration): string[] {
  const problems: string[] = [];
  const { provider } = declaration;
  for (const name of Object.keys(webhooks.objects)) {
    if (!effectiveObject(declaration, name))
      problems.push(`${provider}: webhooks.objects.${name}: names no declared object`);
  }
  if (webhooks.appLevel) {
    if (webhooks.create || webhooks.delete || webhooks.update || webhooks.secret || webhooks.ferrySecret)
      problems.push(`${provider}: webhooks: appLevel subscriptions are the app's; nothing is registered`);
    if (!webhooks.event.workspace)
      problems.push(`${provider}: webhooks.event.workspace: appLevel events are routed by their workspace`);
  } else if (!webhooks.create || !webhooks.delete) {
    problems.push(`${provider}: webhooks: create and delete are needed unless appLevel`);
  } else {
    problems.push(...registrationProblems(declaration, webhooks, webhooks.create, webhooks.delete));
  }
  if (!webhooks.event.recordId === !webhooks.event.recordIds)
    problems.push(`${provider}: webhooks.event: needs exactly one of recordId and recordIds`);
  const { signature } = webhooks;
  if (signature.scheme === 'echoed') {
    if (!webhooks.ferrySecret)
      problems.push(`${provider}: webhooks.signature: the echoed scheme needs ferrySecret, the value echoed`);
    return problems;
  }
  if (signature.scheme === 'basic') {
    if (!webhooks.ferrySecret)
      problems.push(`${provider}: webhooks.signature: the basic scheme needs ferrySecret, its password`);
    return problems;
  }
  if (
    webhooks.signingKey === 'appClientSecret' &&
    (webhooks.ferrySecret || webhooks.create?.secret || webhooks.secret)
  )
    problems.push(`${provider}: webhooks.signingKey: the app's client secret signs; no other secret is kept`);
  if (signature.scheme === 'jwt') return problems;
  if (signature.timestamp && !signature.timestamp.header === (signature.timestamp.body === undefined))
    problems.push(`${provider}: webhooks.signature.timestamp: needs exactly one of header and body`);
  if (!signature.signed.includes('{{body}}'))
    problems.push(`${provider}: webhooks.signature.signed: must include {{body}}`);
  if (signature.signed.includes('{{timestamp}}') && !signature.timestamp)
    problems.push(`${provider}: webhooks.signature.signed: uses {{timestamp}} but no timestamp is declared`);
  for (const [field, pattern] of [
    ['webhooks.signature.pattern', signature.pattern],
    ['webhooks.signature.timestamp.pattern', signature.timestamp?.pattern],
  ] as const) {
    const problem = patternProblem(field, pattern);
    if (problem) problems.push(`${provider}: ${problem}`);
  }
  return problems;
}
