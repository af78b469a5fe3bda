import type { ConnectorHooks } from '../declarative/connector.js';
import type { HookContext } from '../declarative/context.js';

/**
 * Jira's quirks (the rest is `catalog/connectors/atlassian.json`):
 *
 * - The issue search (`/rest/api/3/search/jql`) returns only each issue's `id` unless `fields`
 *   names more. A read that chooses fields asks for those and `updated` (which places each issue
 *   in its window); one that chooses none asks for every field (`*all`).
 * - JQL compares `updated` with a wall-clock time to the minute (`"2024-01-31 14:05"`) in the time
 *   zone of the user the token acts for (`GET /rest/api/3/myself`, `timeZone`), which no template
 *   can write: the hook writes it (as `{{parent}}`) from the window's start, floored to its minute.
 *   When the profile names no time zone it writes the date a day before (midnight of that date
 *   comes before the window's start in every time zone), and Ferry keeps what lies in its window.
 */

const MINUTE = 60_000;
const DAY = 86_400_000;

/** `since` as JQL reads it in `timeZone`: `yyyy-MM-dd HH:mm`, floored to the minute. */
export function jqlMinute(since: Date, timeZone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(new Date(Math.floor(since.getTime() / MINUTE) * MINUTE))
      .map((part) => [part.type, part.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}`;
}

async function userTimeZone(connector: HookContext): Promise<string | undefined> {
  try {
    const response = await connector.send('issues', { method: 'GET', path: '/3/myself', idempotent: true });
    const timeZone = (response.body as { timeZone?: unknown } | undefined)?.timeZone;
    if (typeof timeZone !== 'string') return undefined;
    // An unknown zone name throws here rather than writing a wrong time.
    new Intl.DateTimeFormat('en-CA', { timeZone });
    return timeZone;
  } catch {
    return undefined;
  }
}

export const atlassianHooks: ConnectorHooks = {
  async readPage(connector, input, declared) {
    if (input.objectName !== 'issues') return declared();
    const fields = input.fields?.length ? [...new Set([...input.fields, 'updated'])] : ['*all'];
    if (!input.since) return connector.readDeclaredPage({ ...input, fields });
    const timeZone = await userTimeZone(connector);
    const from = timeZone
      ? jqlMinute(input.since, timeZone)
      : new Date(input.since.getTime() - DAY).toISOString().slice(0, 10);
    return connector.readDeclaredPage({ ...input, fields }, from);
  },
};
