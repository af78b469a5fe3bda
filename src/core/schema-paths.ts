import type { TSchema } from 'typebox';

interface ObjectLike {
  properties?: Record<string, TSchema & { readOnly?: boolean }>;
}

/**
 * Dotted paths of the properties marked `readOnly: true` in an object schema, nested objects
 * included (`config.id`): fields the server owns, which a client's update mask may not name.
 */
export function readOnlyPaths(schema: TSchema, prefix = ''): string[] {
  const paths: string[] = [];
  for (const [name, property] of Object.entries((schema as ObjectLike).properties ?? {})) {
    const path = `${prefix}${name}`;
    if (property.readOnly) paths.push(path);
    else paths.push(...readOnlyPaths(property, `${path}.`));
  }
  return paths;
}

/** The top-level properties of an object schema that a client may set (those not marked `readOnly`). */
export function writableProperties(schema: TSchema): string[] {
  return Object.entries((schema as ObjectLike).properties ?? {})
    .filter(([, property]) => !property.readOnly)
    .map(([name]) => name);
}
