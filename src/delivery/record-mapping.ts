import type { Field } from '../schemas/integration-content.js';

/**
 * Which of a provider record's fields reach the builder, and under which names: `fields` holds the
 * selected fields that are not mapped (names lower-cased), `mappedFields` the mapped ones under
 * their `mapToName`, and `raw` the record exactly as the provider sent it. Field names match the
 * record's keys case-insensitively, and a dotted name (`properties.email`) reaches into nested objects
 * when no key has that exact name.
 */

export interface FieldSelection {
  /** Provider fields the integration always reads (the manifest's required fields). */
  requiredFields?: readonly string[];
  /** The installation's choices: provider field → selected. */
  selectedFields?: Readonly<Record<string, boolean>>;
  /** The customer's mappings: mapToName → provider field. They win over the manifest's renames. */
  selectedFieldMappings?: Readonly<Record<string, string>>;
  /** `selectedFieldsAuto: "all"`: every field the provider returns is selected. */
  allFields?: boolean;
  /** The manifest's renames: provider field → mapToName, applied when that field is selected. */
  fieldMappings?: Readonly<Record<string, string>>;
}

export type ProviderRecord = Record<string, unknown>;

export interface MappedRecord {
  fields: Record<string, unknown>;
  mappedFields: Record<string, unknown>;
  raw: ProviderRecord;
}

/** The record's keys by lower-cased name; the first spelling wins when two differ only in case. */
function keysByLowerName(record: ProviderRecord): Map<string, string> {
  const keys = new Map<string, string>();
  for (const key of Object.keys(record)) {
    const lower = key.toLowerCase();
    if (!keys.has(lower)) keys.set(lower, key);
  }
  return keys;
}

function isObject(value: unknown): value is ProviderRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `{found, value}` so a field that is present with value `undefined` or `null` is told apart from a missing one. */
function lookupField(
  record: ProviderRecord,
  keys: Map<string, string>,
  lowerName: string,
): { found: boolean; value?: unknown } {
  const key = keys.get(lowerName);
  if (key !== undefined) return { found: true, value: record[key] };
  if (!lowerName.includes('.')) return { found: false };
  let current: unknown = record;
  for (const segment of lowerName.split('.')) {
    if (!isObject(current)) return { found: false };
    const segmentKey = keysByLowerName(current).get(segment);
    if (segmentKey === undefined) return { found: false };
    current = current[segmentKey];
  }
  return { found: true, value: current };
}

/** The selected field names (lower-cased) and the active mappings (mapToName → lower-cased provider field). */
function selectionSets(selection: FieldSelection): {
  selected: Set<string>;
  allFields: boolean;
  mappings: Map<string, string>;
} {
  const selected = new Set<string>();
  for (const name of selection.requiredFields ?? []) selected.add(name.toLowerCase());
  for (const [name, isSelected] of Object.entries(selection.selectedFields ?? {})) {
    if (isSelected) selected.add(name.toLowerCase());
  }
  const allFields = selection.allFields === true;
  const mappings = new Map<string, string>();
  for (const [field, mapToName] of Object.entries(selection.fieldMappings ?? {})) {
    if (allFields || selected.has(field.toLowerCase())) mappings.set(mapToName, field.toLowerCase());
  }
  for (const [mapToName, field] of Object.entries(selection.selectedFieldMappings ?? {})) {
    mappings.set(mapToName, field.toLowerCase());
  }
  return { selected, allFields, mappings };
}

/**
 * The provider field a builder names, when the selection delivers it: a selected field (any case),
 * or a `mapToName` standing for its provider field. Spelled as the selection spells it, which is how
 * the provider knows it. Undefined when the selection does not deliver that field.
 */
export function selectedProviderField(selection: FieldSelection, name: string): string | undefined {
  const { selected, allFields, mappings } = selectionSets(selection);
  const lower = mappings.get(name) ?? name.toLowerCase();
  if (!allFields && !selected.has(lower) && ![...mappings.values()].includes(lower)) return undefined;
  const spellings = [
    ...(selection.requiredFields ?? []),
    ...Object.keys(selection.selectedFields ?? {}),
    ...Object.keys(selection.fieldMappings ?? {}),
    ...Object.values(selection.selectedFieldMappings ?? {}),
  ];
  return (
    spellings.find((spelling) => spelling.toLowerCase() === lower) ?? (mappings.has(name) ? lower : name)
  );
}

/** What a selection takes from records whose top-level keys are the same, in the same order. */
interface ShapePlan {
  keys: readonly string[];
  /** The record's keys by lower-cased name. */
  byLowerName: Map<string, string>;
  /** `fields` in order: the top-level key to copy, or undefined to look a dotted name up per record. */
  fields: { name: string; key?: string }[];
  mappedFields: { name: string; source: string; key?: string }[];
}

function sameKeys(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index++) if (a[index] !== b[index]) return false;
  return true;
}

/**
 * Prepares a selection once and returns the function that applies it to each record, since a read
 * maps many records with the same selection. The records of one page nearly always share their
 * keys, so what the selection takes from a record is worked out once per set of keys and reused
 * while the keys stay the same; only dotted names reaching into nested objects are looked up each
 * time.
 */
/**
 * Maps records one after the other. `values`, when given, is the record's values under the names
 * its metadata lists (values kept in containers such as HubSpot's `properties`): fields are selected
 * from it, while `raw` is passed on as it is.
 */
export function fieldMapper(
  selection: FieldSelection,
): (raw: ProviderRecord, values?: ProviderRecord) => MappedRecord {
  const { selected, allFields, mappings } = selectionSets(selection);
  const mappedSources = new Set(mappings.values());
  let plan: ShapePlan | undefined;

  const planFor = (keys: readonly string[]): ShapePlan => {
    const byLowerName = new Map<string, string>();
    for (const key of keys) {
      const lower = key.toLowerCase();
      if (!byLowerName.has(lower)) byLowerName.set(lower, key);
    }
    const names = allFields ? new Set([...byLowerName.keys(), ...selected]) : selected;
    const fields: ShapePlan['fields'] = [];
    for (const name of names) {
      if (mappedSources.has(name)) continue;
      const key = byLowerName.get(name);
      // A name that is no key and has no dot is never found; a dotted one may be, in nested objects.
      if (key !== undefined || name.includes('.')) fields.push({ name, key });
    }
    const mappedFields: ShapePlan['mappedFields'] = [];
    for (const [name, source] of mappings) {
      const key = byLowerName.get(source);
      if (key !== undefined || source.includes('.')) mappedFields.push({ name, source, key });
    }
    return { keys, byLowerName, fields, mappedFields };
  };

  return (raw, values) => {
    const source = values ?? raw;
    const keys = Object.keys(source);
    if (!plan || !sameKeys(plan.keys, keys)) plan = planFor(keys);
    const fields: Record<string, unknown> = {};
    for (const { name, key } of plan.fields) {
      if (key !== undefined) fields[name] = source[key];
      else {
        const { found, value } = lookupField(source, plan.byLowerName, name);
        if (found) fields[name] = value;
      }
    }
    const mappedFields: Record<string, unknown> = {};
    for (const { name, source: from, key } of plan.mappedFields) {
      if (key !== undefined) mappedFields[name] = source[key];
      else {
        const { found, value } = lookupField(source, plan.byLowerName, from);
        if (found) mappedFields[name] = value;
      }
    }
    return { fields, mappedFields, raw };
  };
}

/** Applies a selection to one record. Prefer `fieldMapper` for many records. */
export function selectAndMapFields(raw: ProviderRecord, selection: FieldSelection): MappedRecord {
  return fieldMapper(selection)(raw);
}

/** The parts of an installation's read config that choose fields (COMPAT.md: ReadCfg). */
export interface ReadFieldConfig {
  selectedFields?: Readonly<Record<string, boolean>>;
  selectedFieldMappings?: Readonly<Record<string, string>>;
  selectedFieldsAuto?: string;
}

/**
 * The selection for one read object: required fields and renames come from the manifest, choices and
 * mappings from the installation's config. Mapping-shaped manifest fields (no `fieldName`) are filled
 * by the customer through `selectedFieldMappings`.
 */
export function fieldSelectionFor(
  readObject: { requiredFields?: readonly Field[]; optionalFields?: readonly Field[] },
  config: ReadFieldConfig,
): FieldSelection {
  const fieldMappings: Record<string, string> = {};
  for (const field of [...(readObject.requiredFields ?? []), ...(readObject.optionalFields ?? [])]) {
    if ('fieldName' in field && field.mapToName) fieldMappings[field.fieldName] = field.mapToName;
  }
  return {
    requiredFields: (readObject.requiredFields ?? []).flatMap((field) =>
      'fieldName' in field ? [field.fieldName] : [],
    ),
    selectedFields: config.selectedFields ?? {},
    selectedFieldMappings: config.selectedFieldMappings ?? {},
    allFields: config.selectedFieldsAuto === 'all',
    fieldMappings,
  };
}
