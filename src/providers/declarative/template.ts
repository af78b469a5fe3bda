/**
 * The templates of connector declarations: `{{name}}` or `{{name|format}}` inside strings, and JSON
 * bodies whose strings may be templates. A string that is exactly one placeholder takes the value's
 * own type (a number, a list, a whole record); one placeholder among other text is written into it.
 */

const placeholderPattern = /\{\{\s*([A-Za-z][\w.]*)\s*(?:\|\s*([^}]*?)\s*)?\}\}/g;
const wholePattern = /^\{\{\s*([A-Za-z][\w.]*)\s*(?:\|\s*([^}]*?)\s*)?\}\}$/;

/**
 * `unixSecondsUp` rounds up: a window bound at 12.5 s asks for seconds before 13, which hold 12.0 s.
 * `unixSecondsBelow` is the last whole second before the time (11 for 12.0 s, 12 for 12.5 s): a
 * provider's strict "after" bound then still returns what changed at the time itself;
 * `isoSecondsBelow` is that second written as `isoSeconds`.
 * `dateTimeSeconds` writes the UTC date and time to the second with a space between
 * (`2024-01-01 12:34:56`, ServiceNow's encoded queries).
 * `dateBefore` and `dateAfter` are the UTC dates of the day before and after: a provider that
 * compares whole days in its account's own time zone (monday.com) then still covers the window.
 */
export const timeFormats = [
  'iso',
  'isoSeconds',
  'isoSecondsBelow',
  'unixSeconds',
  'unixSecondsUp',
  'unixSecondsBelow',
  'unixMs',
  'date',
  'dateTimeSeconds',
  'dateBefore',
  'dateAfter',
] as const;

const day = 86_400_000;

/** The values a template may use: times are Dates, `fields` a list, `vars` the object's own strings. */
export type TemplateValues = Record<string, unknown> & {
  vars?: Record<string, string>;
  connection?: Record<string, string>;
};

export interface Placeholder {
  name: string;
  format?: string;
}

/** A value a single-placeholder member had none of: the member is left out. */
export const ABSENT = Symbol('absent');

/** Thrown when a template written inside text names a value that is missing. */
export class TemplateValueError extends Error {}

function lookup(values: TemplateValues, name: string): unknown {
  if (name.startsWith('vars.')) return values.vars?.[name.slice('vars.'.length)];
  if (name.startsWith('connection.')) return values.connection?.[name.slice('connection.'.length)];
  return Object.hasOwn(values, name) ? values[name] : undefined;
}

function isKnownStep(format: string): boolean {
  return (
    (timeFormats as readonly string[]).includes(format) ||
    format === 'json' ||
    format === 'string' ||
    format.startsWith('join:') ||
    /^default:.+$/.test(format) ||
    format === 'path' ||
    format === 'lastSegment' ||
    /^add:[+-]?\d+$/.test(format) ||
    /^(escape|double):.+$/.test(format) ||
    /^shift:[+-]?\d+$/.test(format)
  );
}

/** Whether `format` is one a template may use: steps such as `unixMs|string`, applied in order. */
export function isKnownFormat(format: string): boolean {
  return format.split('|').every((step) => isKnownStep(step.trim()));
}

function formatTime(time: Date, format: string): string | number {
  switch (format) {
    case 'isoSeconds':
      return time.toISOString().replace(/\.\d{3}Z$/, 'Z');
    case 'isoSecondsBelow':
      return new Date((Math.ceil(time.getTime() / 1000) - 1) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
    case 'unixSeconds':
      return Math.floor(time.getTime() / 1000);
    case 'unixSecondsUp':
      return Math.ceil(time.getTime() / 1000);
    case 'unixSecondsBelow':
      return Math.ceil(time.getTime() / 1000) - 1;
    case 'unixMs':
      return time.getTime();
    case 'date':
      return time.toISOString().slice(0, 10);
    case 'dateTimeSeconds':
      return time.toISOString().slice(0, 19).replace('T', ' ');
    case 'dateBefore':
      return new Date(time.getTime() - day).toISOString().slice(0, 10);
    case 'dateAfter':
      return new Date(time.getTime() + day).toISOString().slice(0, 10);
    default:
      return time.toISOString();
  }
}

/**
 * The text a `default:<text>` step gives a placeholder without a value (Google People's required
 * `personFields` when a read chooses no fields: `{{fields|join:,|default:names,emailAddresses}}`).
 */
function fallback(format: string | undefined): string | undefined {
  const step = format
    ?.split('|')
    .map((part) => part.trim())
    .find((part) => part.startsWith('default:'));
  return step?.slice('default:'.length);
}

function formattedStep(value: unknown, format: string | undefined): unknown {
  // A value present passes a `default:` step unchanged; `path` is how a request path writes it.
  if (format?.startsWith('default:') || format === 'path') return value;
  // The last segment of a URI used as an id (Calendly's `https://api.calendly.com/event_types/AAA`).
  // `add:1`: a number moved, as a 1-based position from Ferry's 0-based offset (QuickBooks' STARTPOSITION).
  if (format?.startsWith('add:') && typeof value === 'number')
    return value + Number(format.slice('add:'.length));
  if (format === 'lastSegment') return asText(value).replace(/\/+$/, '').split('/').pop();
  // `shift:-172800` moves a time by whole seconds, before a later step writes it (`shift:-172800|unixSeconds`).
  if (value instanceof Date && format?.startsWith('shift:'))
    return new Date(value.getTime() + Number(format.slice('shift:'.length)) * 1000);
  if (value instanceof Date) return formatTime(value, format ?? 'iso');
  if (format === 'json') return JSON.stringify(value);
  if (format === 'string') return asText(value);
  if (Array.isArray(value) && format?.startsWith('join:')) return value.join(format.slice('join:'.length));
  if (format?.startsWith('escape:')) return escaped(asText(value), format.slice('escape:'.length));
  if (format?.startsWith('double:')) return doubled(asText(value), format.slice('double:'.length));
  return value;
}

/**
 * A value quoted inside a provider's query language: `escape:'` puts a backslash before each
 * backslash and each listed character (Stripe's and Shopify's search syntax), `double:'` doubles
 * each listed character (OData's string literals), so a value cannot close its quotes.
 */
function escaped(text: string, chars: string): string {
  return [...text].map((c) => (c === '\\' || chars.includes(c) ? `\\${c}` : c)).join('');
}
function doubled(text: string, chars: string): string {
  return [...text].map((c) => (chars.includes(c) ? c + c : c)).join('');
}

/** The value as the placeholder asks for it, keeping its JSON type when it stands alone. */
function formatted(value: unknown, format: string | undefined): unknown {
  if (format === undefined) return formattedStep(value, undefined);
  const result = format.split('|').reduce((current, step) => formattedStep(current, step.trim()), value);
  // A time only shifted is still written, as ISO 8601 like any time without a format.
  return result instanceof Date ? formatTime(result, 'iso') : result;
}

/** A value written into text: lists comma-separated, objects as JSON. */
function asText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(asText).join(',');
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}

/**
 * Renders one string. Returns ABSENT when the string is a single placeholder without a value (the
 * caller leaves the member out); a placeholder inside other text must have a value.
 */
export function renderString(template: string, values: TemplateValues, keepType = false): unknown {
  const whole = wholePattern.exec(template);
  if (whole) {
    const value = lookup(values, whole[1]);
    if (value === undefined || value === null) return fallback(whole[2]) ?? ABSENT;
    const result = formatted(value, whole[2]);
    return keepType ? result : asText(result);
  }
  return template.replace(placeholderPattern, (_match, name: string, format: string | undefined) => {
    const value = lookup(values, name);
    if (value === undefined || value === null) {
      throw new TemplateValueError(`the template "${template}" needs a value for {{${name}}}`);
    }
    return asText(formatted(value, format));
  });
}

/** The member name whose object value is spread into the object holding it. */
export const SPREAD = '...';

/** Renders a JSON template: members and items whose value is ABSENT are left out. */
export function renderJson(template: unknown, values: TemplateValues): unknown {
  if (typeof template === 'string') return renderString(template, values, true);
  if (Array.isArray(template)) {
    return template.map((item) => renderJson(item, values)).filter((item) => item !== ABSENT);
  }
  if (template && typeof template === 'object') {
    const rendered: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(template)) {
      const result = renderJson(value, values);
      if (result === ABSENT) continue;
      // `"...": "{{record}}"` spreads an object beside the members written out (GraphQL's `{id, ...fields}` inputs).
      if (key === SPREAD && result && typeof result === 'object' && !Array.isArray(result))
        Object.assign(rendered, result);
      else rendered[key] = result;
    }
    return rendered;
  }
  return template;
}

/** Every placeholder a string or JSON template uses, for checks when declarations load. */
export function placeholdersOf(template: unknown): Placeholder[] {
  if (typeof template === 'string') {
    return [...template.matchAll(placeholderPattern)].map((match) => ({
      name: match[1],
      ...(match[2] !== undefined && { format: match[2] }),
    }));
  }
  if (Array.isArray(template)) return template.flatMap(placeholdersOf);
  if (template && typeof template === 'object') return Object.values(template).flatMap(placeholdersOf);
  return [];
}
