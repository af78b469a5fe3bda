import type { ValuesContainer } from '../../schemas/connector-declaration.js';
import { valueAt } from './json-pointer.js';

/**
 * The names a record's values go by are the names its metadata lists. Where a provider keeps values
 * in containers (HubSpot's `properties`, Pipedrive's `custom_fields` object, Zendesk's
 * `custom_fields` list of `{id, value}`), reads see them under those names and writes send them
 * back into their containers.
 */

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The values one container holds, by the name each goes by (`<prefix><name>`). */
function containedValues(record: Record<string, unknown>, container: ValuesContainer): [string, unknown][] {
  const held = valueAt(record, container.at);
  const prefix = container.prefix ?? '';
  if (container.entries) {
    if (!Array.isArray(held)) return [];
    const { name, value } = container.entries;
    return held
      .map((entry) => [valueAt(entry, name), valueAt(entry, value)] as const)
      .filter(([key]) => typeof key === 'string' || typeof key === 'number')
      .map(([key, entryValue]) => [`${prefix}${String(key)}`, entryValue ?? null]);
  }
  return isObject(held)
    ? Object.entries(held).map(([key, entryValue]) => [`${prefix}${key}`, entryValue])
    : [];
}

/**
 * The record's values under metadata names: its top-level keys, then each container's values (a
 * contained value wins over a top-level key of the same name, since metadata names the contained
 * one). Undefined when the object declares no containers: `raw` itself is the view.
 */
export function recordValues(
  raw: Record<string, unknown>,
  containers: readonly ValuesContainer[] | undefined,
): Record<string, unknown> | undefined {
  if (!containers?.length) return undefined;
  const values: Record<string, unknown> = { ...raw };
  for (const container of containers) {
    for (const [name, value] of containedValues(raw, container)) values[name] = value;
  }
  return values;
}

/** Sets `value` at a pointer in `target`, making the objects on its way. */
function setAt(target: Record<string, unknown>, pointer: string, value: unknown): void {
  const segments = pointer
    .split('/')
    .slice(1)
    .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
  let current = target;
  for (const segment of segments.slice(0, -1)) {
    if (!isObject(current[segment])) current[segment] = {};
    current = current[segment] as Record<string, unknown>;
  }
  current[segments[segments.length - 1]] = value;
}

/**
 * The write's keys a container takes, each with the name it goes by inside: `<prefix><name>`; a
 * list of entries without a prefix whose names are numbers (Copper's `custom_fields` of
 * `{custom_field_definition_id, value}`, whose metadata names are the bare ids) takes the keys that
 * are numbers, which no top-level field is named. Other containers without a prefix take none: a
 * write sends those as the write request says (HubSpot's `{"properties": "{{record}}"}`).
 */
function keysTaken(container: ValuesContainer, keys: string[]): [string, string][] {
  const prefix = container.prefix;
  if (prefix !== undefined) {
    return keys
      .filter((key) => key.startsWith(prefix) && key.length > prefix.length)
      .map((key) => [key, key.slice(prefix.length)]);
  }
  if (!container.entries?.numericNames) return [];
  return keys.filter((key) => /^\d+$/.test(key)).map((key) => [key, key]);
}

/**
 * A write's values with each `<prefix><name>` moved into its container: an object's member, or a
 * list entry `{name, value}`. Values the caller already gave in the container's own shape stay; a
 * named value replaces the entry or member of the same name.
 */
export function foldValues(
  values: Record<string, unknown>,
  containers: readonly ValuesContainer[] | undefined,
): Record<string, unknown> {
  if (!containers?.length) return values;
  const folded: Record<string, unknown> = { ...values };
  for (const container of containers) {
    const named = keysTaken(container, Object.keys(folded));
    if (!named.length) continue;
    const current = valueAt(folded, container.at);
    if (container.entries) {
      const { name, value, numericNames } = container.entries;
      const entries = Array.isArray(current) ? [...current] : [];
      for (const [key, entryName] of named) {
        const typedName = numericNames && /^\d+$/.test(entryName) ? Number(entryName) : entryName;
        const entry: Record<string, unknown> = {};
        setAt(entry, name, typedName);
        setAt(entry, value, folded[key]);
        const existing = entries.findIndex((item) => String(valueAt(item, name)) === entryName);
        if (existing >= 0) entries[existing] = entry;
        else entries.push(entry);
        delete folded[key];
      }
      setAt(folded, container.at, entries);
    } else {
      const members: Record<string, unknown> = isObject(current) ? { ...current } : {};
      for (const [key, memberName] of named) {
        members[memberName] = folded[key];
        delete folded[key];
      }
      setAt(folded, container.at, members);
    }
  }
  return folded;
}
