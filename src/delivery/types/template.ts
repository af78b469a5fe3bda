/**
 * Routing-key and subject templates: `{name}` is replaced by the message's top-level field of that
 * name (`action`, `objectName`, `provider`, `installationId`, `notificationType`, …); a field the
 * message lacks becomes `unknown`. The body is parsed only when the template has a placeholder.
 */

const PLACEHOLDER = /\{([A-Za-z][A-Za-z0-9_]*)\}/g;

/** The field names a template uses, or an issue when it has a stray brace. */
export function templateProblem(template: string): string | undefined {
  const stripped = template.replace(PLACEHOLDER, '');
  if (/[{}]/.test(stripped)) return 'placeholders are {fieldName}, a letter then letters, digits or _';
  return undefined;
}

export function hasPlaceholders(template: string): boolean {
  return template.replace(PLACEHOLDER, '') !== template;
}

/** Fills the template from the message; values are made safe for dotted routing keys and subjects. */
export function fillTemplate(
  template: string,
  body: string | Buffer,
  clean: (value: string) => string = (value) => value,
): string {
  if (!hasPlaceholders(template)) return template;
  let message: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
    if (parsed && typeof parsed === 'object') message = parsed as Record<string, unknown>;
  } catch {
    // Ferry's own bodies are JSON; anything else fills every placeholder with `unknown`.
  }
  return template.replace(PLACEHOLDER, (_, name: string) => {
    const value = message[name];
    return typeof value === 'string' || typeof value === 'number' ? clean(String(value)) : 'unknown';
  });
}
