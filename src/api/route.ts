import type { Context } from 'koa';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Static, TSchema } from 'typebox';
import type { Project } from '../db/entities/project.js';
import type { Principal } from '../core/principal.js';

export type Host = 'api' | 'read' | 'write';
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
}

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
}

export interface HandlerResult {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
  contentType?: string;
}

/**
 * One declaration per endpoint: the router, request validation and the OpenAPI document are all
 * derived from it, so they cannot drift apart.
 */
export interface RouteDefinition<
  P extends TSchema = TSchema,
  Q extends TSchema = TSchema,
  B extends TSchema = TSchema,
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
  /** Accept a body that is not JSON (e.g. provider webhooks); the handler reads `koa.request.rawBody`. */
  rawBody?: boolean;
  deprecated?: boolean;
  responses: Record<number, RouteResponse>;
  handler(ctx: HandlerContext<Static<P>, Static<Q>, Static<B>>): Promise<HandlerResult>;
}

export function defineRoute<P extends TSchema, Q extends TSchema, B extends TSchema>(
  route: RouteDefinition<P, Q, B>,
): RouteDefinition {
  return route as unknown as RouteDefinition;
}

/** `{name}` → `:name`, and literal colons (`integrations:batch`) escaped for path-to-regexp. */
export function toKoaPath(path: string): string {
  return `/v1${path}`.replace(/:/g, '\\:').replace(/\{(\w+)\}/g, ':$1');
}
