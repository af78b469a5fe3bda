import type { HookContext } from '../declarative/context.js';

/**
 * The field names an object's metadata describes, for providers whose reads must name every field
 * (Salesforce's SOQL, Zoho CRM's `fields`). Remembered per connection and object for a few
 * minutes, so a read's first page does not describe the object again each time; a field added at
 * the provider shows up within that time, and `forget` drops an entry the provider refused.
 */

const ttlMs = 5 * 60_000;
const maxEntries = 1_000;
const remembered = new Map<string, { names: string[]; expires: number }>();

function keyOf(connector: HookContext, objectName: string): string {
  return JSON.stringify([
    connector.provider,
    connector.connectionId ?? '',
    connector.http.baseUrl(),
    objectName,
  ]);
}

export async function describedFieldNames(
  connector: HookContext,
  objectName: string,
  now = Date.now(),
): Promise<string[]> {
  const key = keyOf(connector, objectName);
  const hit = remembered.get(key);
  if (hit && hit.expires > now) return hit.names;
  const names = Object.keys((await connector.declaredMetadata(objectName)).fields);
  remembered.delete(key);
  if (remembered.size >= maxEntries) remembered.delete(remembered.keys().next().value!);
  remembered.set(key, { names, expires: now + ttlMs });
  return names;
}

/** Whether the names came from memory rather than a describe just made. */
export function rememberedFieldNames(connector: HookContext, objectName: string, now = Date.now()): boolean {
  const hit = remembered.get(keyOf(connector, objectName));
  return hit !== undefined && hit.expires > now;
}

export function forgetFieldNames(connector: HookContext, objectName: string): void {
  remembered.delete(keyOf(connector, objectName));
}
