import { describe, expect, it } from '@jest/globals';
import { jqlMinute } from '../../src/providers/connectors/atlassian.js';

/** What the conformance suite does not see of Jira's hook: JQL times written in other time zones. */
describe('jqlMinute', () => {
  it('writes the window start as the user’s wall clock, floored to the minute', () => {
    const since = new Date(Date.UTC(2026, 0, 15, 23, 59, 59, 900));
    expect(jqlMinute(since, 'UTC')).toBe('2026-01-15 23:59');
    expect(jqlMinute(since, 'Asia/Kolkata')).toBe('2026-01-16 05:29');
    expect(jqlMinute(since, 'America/Los_Angeles')).toBe('2026-01-15 15:59');
  });

  it('follows daylight saving time', () => {
    expect(jqlMinute(new Date(Date.UTC(2026, 6, 1, 12, 0)), 'Europe/Paris')).toBe('2026-07-01 14:00');
    expect(jqlMinute(new Date(Date.UTC(2026, 0, 1, 12, 0)), 'Europe/Paris')).toBe('2026-01-01 13:00');
  });

  it('writes midnight as 00, not 24', () => {
    expect(jqlMinute(new Date(Date.UTC(2026, 2, 1, 0, 0)), 'UTC')).toBe('2026-03-01 00:00');
  });
});
