import type { Context } from 'koa';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Static, TSchema } from 'typebox';
import type { Project } from '../db/entities/project.js';
import type { Principal } from '../core/principal.js';
import type { BatchedList } from './batched-list.js';
import type { Config } from '../config.js';

export type Host = 'api' | 'read' | 'write' | 'search';
/**
 * `bearer` is a builder's Ferry-issued token; `projectJwt` a token the builder's backend signs with
 * a project JWT key, accepted only where the spec lists Bearer for it.
 */
export type AuthScheme = 'apiKey' | 'bearer' | 'projectJwt' | 'none';
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface RouteResponse {
  description: string;
  schema?: TSchema;
  contentType?: string;
  /**
   * Other media types the same body is sent as when the request's `Accept` prefers one of them
   * (the handler answers with that `contentType`); listed beside `contentType` in the document.
   */
  alsoAs?: string[];
}

export type RouteResponses = Record<number, RouteResponse>;

export interface HandlerContext<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  /** Who is calling; `undefined` only on routes with `auth: ['none']`. */
  principal: Principal;
  /** The project named by `{projectIdOrName}`, already checked against the caller. */
  project: Project;
  em: EntityManager;
  requestId: string;
  koa: Context;
  /** The deployment's settings, read once for this request where it enters (`createApp`). */
  settings: Config;
}

/** The settings a request was given where it entered the app (`createApp`), for Koa middleware outside the routes. */
export function requestSettings(ctx: Context): Config {
  return ctx.state.settings as Config;
}

interface ResultExtras {
  headers?: Record<string, string>;
  contentType?: string;
}

/**
 * What a handler may answer: one of the route's declared statuses, with a body of that status's
 * schema (none where the status has no schema). A handler returning the wrong shape fails the
 * typecheck, so the OpenAPI document cannot promise what the code does not send.
 */
export type HandlerResult<R extends RouteResponses = RouteResponses> = {
  [S in keyof R & number]: ResultExtras &
    (R[S] extends { schema: infer T extends TSchema }
      ? { status: S; body: Static<T> | BatchedBody<Static<T>> }
      : R[S] extends { contentType: string }
        ? { status: S; body: string }
        : { status: S; body?: undefined });
}[keyof R & number];

/** An array answer may also be given as a list read in batches. */
type BatchedBody<T> = T extends readonly (infer Item)[] ? BatchedList<Item> : never;

/** Everything about an endpoint but its handler: what routing, validation and the OpenAPI document need. */
export interface RouteDeclaration<
  P extends TSchema = TSchema,
  Q extends TSchema = TSchema,
  B extends TSchema = TSchema,
  R extends RouteResponses = RouteResponses,
> {
  method: HttpMethod;
  /** OpenAPI-style path under `/v1`, e.g. `/projects/{projectIdOrName}/integrations:batch`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  /** Hosts serving this route; the api host when omitted. */
  hosts?: Host[];
  auth: AuthScheme[];
  params?: P;
  query?: Q;
  body?: B;
  /**
   * A request body that works as it is against the quick start's stack (README), shown by the
   * reference page and sent by its "Try it out".
   */
  bodyExample?: Static<B>;
  /** Accept a body that is not JSON (e.g. provider webhooks); the handler reads its bytes, `koa.state.rawBody`. */
  rawBody?: boolean;
  deprecated?: boolean;
  /** A remedy for every 404 the route answers, the project's own included (the JWT key endpoints'). */
  notFoundRemedy?: string;
  responses: R;
}

export type RouteHandler<
  P extends TSchema,
  Q extends TSchema,
  B extends TSchema,
  R extends RouteResponses,
> = (ctx: HandlerContext<Static<P>, Static<Q>, Static<B>>) => Promise<HandlerResult<R>>;

/**
 * One declaration per endpoint: the router, request validation, response types and the OpenAPI
 * document are all derived from it, so they cannot drift apart.
 */
export interface RouteDefinition<
  P extends TSchema = TSchema,
  Q extends TSchema = TSchema,
  B extends TSchema = TSchema,
  R extends RouteResponses = RouteResponses,
> extends RouteDeclaration<P, Q, B, R> {
  handler: RouteHandler<P, Q, B, R>;
}

/** A declared route, its types erased so routes of every shape can share one list. */
export type AnyRoute = RouteDefinition<TSchema, TSchema, TSchema, RouteResponses>;

/**
 * `defineRoute({...}).handle(async (ctx) => ...)`: the declaration is typed first, so the handler's
 * answers are checked against the declared responses (status and body shape).
 */
export function defineRoute<
  P extends TSchema,
  Q extends TSchema,
  B extends TSchema,
  const R extends RouteResponses,
>(declaration: RouteDeclaration<P, Q, B, R>): { handle(handler: RouteHandler<P, Q, B, R>): AnyRoute } {
  return {
    handle: (handler) => ({ ...declaration, handler }) as unknown as AnyRoute,
  };
}

/** `{name}` → `:name`, and literal colons (`integrations:batch`) escaped for path-to-regexp. */
export function toKoaPath(path: string): string {
  return `/v1${path}`.replace(/:/g, '\\:').replace(/\{(\w+)\}/g, ':$1');
}
