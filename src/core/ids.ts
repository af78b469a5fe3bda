const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether a path or query value is a UUID (the id form every Ferry resource uses). */
export function isUuid(value: string): boolean {
  return uuidPattern.test(value);
}
