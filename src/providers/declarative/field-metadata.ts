import type { MetadataDeclaration, Predicate, StaticField } from '../../schemas/connector-declaration.js';
import type { FieldMetadata } from '../../schemas/object-metadata.js';
import { valueAt } from './json-pointer.js';

/** Whether a field descriptor has a property, as a declaration's predicate says. */
export function holds(predicate: Predicate | undefined, descriptor: unknown): boolean {
  if (predicate === undefined) return false;
  if (typeof predicate === 'boolean') return predicate;
  if (typeof predicate === 'string') {
    const value = valueAt(descriptor, predicate);
    return value === true || value === 'true' || (typeof value === 'number' && value !== 0);
  }
  if ('not' in predicate) return !holds(predicate.not, descriptor);
  if ('anyOf' in predicate) return predicate.anyOf.some((inner) => holds(inner, descriptor));
  if ('includes' in predicate) {
    const value = valueAt(descriptor, predicate.includes.at);
    return Array.isArray(value)
      ? value.includes(predicate.includes.value)
      : value === predicate.includes.value;
  }
  if ('matches' in predicate) {
    const value = valueAt(descriptor, predicate.matches.at);
    return typeof value === 'string' && new RegExp(predicate.matches.pattern).test(value);
  }
  return predicate.allOf.every((inner) => holds(inner, descriptor));
}

function text(value: unknown): string | undefined {
  return value === undefined || value === null ? undefined : String(value);
}

/** One provider field descriptor as Ferry's field metadata; undefined when it names no field. */
export function describedField(
  declaration: MetadataDeclaration,
  descriptor: unknown,
): FieldMetadata | undefined {
  const parts = (Array.isArray(declaration.name) ? declaration.name : [declaration.name]).map((pointer) =>
    text(valueAt(descriptor, pointer)),
  );
  if (parts.some((part) => !part)) return undefined;
  const name = parts.join('.');
  const providerType = text(valueAt(descriptor, declaration.type)) ?? 'unknown';
  const subtype = declaration.subtype && text(valueAt(descriptor, declaration.subtype));
  const typeKey = [subtype && `${providerType}/${subtype}`, providerType].find(
    (key): key is string => Boolean(key) && Object.hasOwn(declaration.types, key!),
  );
  const lists = declaration.options
    ? Array.isArray(declaration.options.list)
      ? declaration.options.list
      : [declaration.options.list]
    : [];
  const options = lists.map((pointer) => valueAt(descriptor, pointer)).find(Array.isArray);
  const values = Array.isArray(options)
    ? options
        .map((option) => ({
          value: text(valueAt(option, declaration.options!.value)),
          displayValue: text(valueAt(option, declaration.options!.label)),
        }))
        .filter((option, index) => {
          const active = declaration.options!.active;
          return active === undefined || holds(active, (options as unknown[])[index]);
        })
        .filter((option): option is { value: string; displayValue: string } => option.value !== undefined)
        .map((option) => ({ value: option.value, displayValue: option.displayValue ?? option.value }))
    : [];
  return {
    fieldName: `${affix(declaration.prefix, descriptor)}${name}${affix(declaration.suffix, descriptor)}`,
    displayName: (declaration.label && text(valueAt(descriptor, declaration.label))) || name,
    valueType: typeKey ? declaration.types[typeKey] : 'other',
    providerType,
    ...writability(declaration, descriptor),
    isCustom: holds(declaration.custom, descriptor),
    isRequired: holds(declaration.required, descriptor),
    ...(values.length && { values }),
  };
}

/** Whether the descriptor describes a field in use (`active`); fields without the flag are. */
export function isActiveField(declaration: MetadataDeclaration, descriptor: unknown): boolean {
  return declaration.active === undefined || holds(declaration.active, descriptor);
}

/** A `prefix` or `suffix` as it applies to this descriptor. */
function affix(declared: MetadataDeclaration['prefix'], descriptor: unknown): string {
  if (declared === undefined) return '';
  if (typeof declared === 'string') return declared;
  return holds(declared.when, descriptor) ? declared.text : '';
}

/** Read-only, or settable on create or update only, as `creatable`/`updatable` (or `readOnly`) say. */
function writability(
  declaration: MetadataDeclaration,
  descriptor: unknown,
): Pick<FieldMetadata, 'readOnly' | 'createOnly' | 'updateOnly'> {
  if (declaration.creatable === undefined || declaration.updatable === undefined)
    return { readOnly: holds(declaration.readOnly, descriptor) };
  const create = holds(declaration.creatable, descriptor);
  const update = holds(declaration.updatable, descriptor);
  return {
    readOnly: !create && !update,
    ...(create && !update && { createOnly: true }),
    ...(update && !create && { updateOnly: true }),
  };
}

/** A field the declaration lists because no endpoint describes it. */
export function staticField(name: string, field: StaticField): FieldMetadata {
  return {
    fieldName: name,
    displayName: field.displayName,
    valueType: field.valueType,
    providerType: field.providerType,
    readOnly: field.readOnly ?? false,
    ...(field.createOnly && { createOnly: true }),
    isCustom: false,
    isRequired: field.isRequired ?? false,
    ...(field.values && { values: field.values }),
  };
}
