import { call } from './api';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- an OpenAPI document, walked by known paths
type Json = Record<string, any>;

let document: Promise<Json> | undefined;

/** This host's OpenAPI document, fetched once: what the console offers follows what the API takes. */
function openapi(): Promise<Json> {
  document ??= call<Json>('GET', '/openapi.json').catch((error) => {
    document = undefined;
    throw error;
  });
  return document;
}

/** The JSON body schema an operation takes (`$ref`s followed). */
async function requestBody(path: string, method: 'post' | 'patch'): Promise<Json | undefined> {
  const doc = await openapi();
  const resolve = (schema: Json | undefined): Json | undefined =>
    schema?.$ref ? resolve(doc.components?.schemas?.[String(schema.$ref).split('/').pop()!]) : schema;
  // Paths are written in full (`/v1/projects/…`); the console names them from the version on.
  const key = Object.keys(doc.paths ?? {}).find((candidate) => candidate.endsWith(path));
  const body = resolve(
    key ? doc.paths[key]?.[method]?.requestBody?.content?.['application/json']?.schema : undefined,
  );
  if (!body) return undefined;
  return {
    ...body,
    properties: Object.fromEntries(
      Object.entries((body.properties ?? {}) as Json).map(([name, schema]) => [name, resolve(schema)]),
    ),
  };
}

const strings = (values: unknown): string[] =>
  Array.isArray(values) ? values.filter((value): value is string => typeof value === 'string') : [];

/** The event types a notification route may name. */
export async function eventTypes(): Promise<string[]> {
  const body = await requestBody('/projects/{projectIdOrName}/notification-event-topic-routes', 'post');
  const eventType = body?.properties?.eventType;
  return strings(eventType?.enum ?? eventType?.anyOf?.map((option: Json) => option.const));
}

export interface DestinationExample {
  type: string;
  metadata: Record<string, unknown>;
  secrets?: Record<string, unknown>;
}

/** One example create body per destination type, as the API documents them. */
export async function destinationExamples(): Promise<DestinationExample[]> {
  const body = await requestBody('/projects/{projectIdOrName}/destinations', 'post');
  return ((body?.examples ?? []) as Json[])
    .filter((example) => typeof example?.type === 'string')
    .map((example) => ({ type: example.type, metadata: example.metadata ?? {}, secrets: example.secrets }));
}
