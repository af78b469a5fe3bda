import type { TimeFormat } from '../../schemas/connector-declaration.js';

const canonicalIso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * A provider's timestamp as ISO 8601 in UTC with milliseconds, read the way the declaration says it
 * is written; undefined when it is not one. Already canonical text is returned as it is, since every
 * record of a read passes through here.
 */
export function isoTime(value: unknown, format: TimeFormat): string | undefined {
  if (typeof value === 'string' && canonicalIso.test(value)) return value;
  return parseTime(value, format)?.toISOString();
}

/** A provider's timestamp as a Date, read the way the declaration says it is written; undefined when it is not one. */
export function parseTime(value: unknown, format: TimeFormat): Date | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  let ms: number;
  if (format === 'unixSeconds' || format === 'unixMs') {
    const number = typeof value === 'number' ? value : Number(value);
    ms = format === 'unixSeconds' ? number * 1000 : number;
  } else if (typeof value === 'string' && /^\/Date\(-?\d+([+-]\d{4})?\)\/$/.test(value)) {
    // Microsoft's JSON date (Xero's `/Date(1573755038314+0000)/`): milliseconds since the epoch, the
    // offset only a display zone.
    ms = Number(/-?\d+/.exec(value)![0]);
  } else {
    // `+0000` (Salesforce) is read as `+00:00`; more than millisecond precision is cut to it.
    // A date and time without a zone is UTC (ServiceNow's `2024-01-01 12:34:56`), whatever the host's zone.
    const text = String(value)
      .replace(/([+-]\d{2})(\d{2})$/, '$1:$2')
      .replace(/(\.\d{3})\d+/, '$1')
      .replace(/^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)$/, '$1T$2Z');
    ms = Date.parse(text);
  }
  return Number.isFinite(ms) ? new Date(ms) : undefined;
}
