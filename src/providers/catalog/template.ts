/** `{{.name}}` placeholders of catalog URLs (Go-template style, as the public provider catalogs write them). */
const PLACEHOLDER = /\{\{\s*\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g;

export class ProviderTemplateError extends Error {
  constructor(
    message: string,
    readonly missing: string[],
  ) {
    super(message);
    this.name = 'ProviderTemplateError';
  }
}

/** The distinct placeholder names of a template, in order of first appearance. */
export function templateVariables(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER)].map((match) => match[1]))];
}

/**
 * Fills every `{{.name}}` of a template from `vars`; throws naming each missing variable.
 * Values are inserted as given: callers that put user-entered values into a host name check them first.
 */
export function renderProviderTemplate(template: string, vars: Record<string, string>): string {
  const missing = templateVariables(template).filter(
    (name) => !Object.hasOwn(vars, name) || typeof vars[name] !== 'string' || vars[name] === '',
  );
  if (missing.length > 0) {
    throw new ProviderTemplateError(
      `Template "${template}" needs ${missing.map((name) => `"${name}"`).join(', ')}, which ${missing.length === 1 ? 'is' : 'are'} not set.`,
      missing,
    );
  }
  return template.replace(PLACEHOLDER, (_match, name: string) => vars[name]);
}
