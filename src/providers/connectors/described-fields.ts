import { TtlCache } from '../../core/ttl-cache.js';
import type { HookContext } from '../declarative/context.js';

/**
 * The field names an object's metadata describes, for providers whose reads must name every field
 * (Salesforce's SOQL, Zoho CRM's `fields`). Remembered per connection and object for a few
 * minutes, so a read's first page does not describe the object again each time; a field added at
 * the provider shows up within that time, and `forget` drops an entry the provider refused.
 */

const ttlMs = 5 * 60_000;
const maxEntries = 1_000;
const remembered = new TtlCache<string, string[]>(ttlMs, maxEntries);

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
  const hit = remembered.get(key, now);
  if (hit) return hit;
  const names = Object.keys((await connector.declaredMetadata(objectName)).fields);
  remembered.set(key, names, now);
  return names;
}

/** Whether the names came from memory rather than a describe just made. */
export function rememberedFieldNames(connector: HookContext, objectName: string, now = Date.now()): boolean {
  return remembered.get(keyOf(connector, objectName), now) !== undefined;
}

export function forgetFieldNames(connector: HookContext, objectName: string): void {
  remembered.delete(keyOf(connector, objectName));
}
