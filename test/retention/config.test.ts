import { spawnSync } from 'node:child_process';
import { describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from '../../src/config.js';

/** FERRY_RETENTION_*: defaults, and bad values refused at start with a message naming the variable. */

const load = (vars: Record<string, string>) => loadConfig({ ...process.env, ...vars });

describe('retention settings', () => {
  it('defaults to 30 days for logs, attempts and checkpoints, 90 for operations, hourly passes', () => {
    const { retention } = loadConfig({ ...process.env, FERRY_RETENTION_SCHEDULE: '' });
    expect(retention).toEqual({
      operationLogsDays: 30,
      deliveryAttemptsDays: 30,
      readCheckpointsDays: 30,
      storedPagesDays: 14,
      eventsDays: 30,
      subscriptionEventsDays: 7,
      operationsDays: 90,
      temporalDays: 30,
      schedule: '17 * * * *',
      batchSize: 1000,
    });
  });

  it('reads every window from its variable', () => {
    const { retention } = load({
      FERRY_RETENTION_OPERATION_LOGS_DAYS: '10',
      FERRY_RETENTION_DELIVERY_ATTEMPTS_DAYS: '11',
      FERRY_RETENTION_READ_CHECKPOINTS_DAYS: '12',
      FERRY_RETENTION_STORED_PAGES_DAYS: '3',
      FERRY_RETENTION_EVENTS_DAYS: '14',
      FERRY_RETENTION_SUBSCRIPTION_EVENTS_DAYS: '2',
      FERRY_RETENTION_OPERATIONS_DAYS: '365',
      FERRY_RETENTION_TEMPORAL_DAYS: '7',
      FERRY_RETENTION_SCHEDULE: '30 3 * * *',
      FERRY_RETENTION_BATCH_SIZE: '500',
    });
    expect(retention).toEqual({
      operationLogsDays: 10,
      deliveryAttemptsDays: 11,
      readCheckpointsDays: 12,
      storedPagesDays: 3,
      eventsDays: 14,
      subscriptionEventsDays: 2,
      operationsDays: 365,
      temporalDays: 7,
      schedule: '30 3 * * *',
      batchSize: 500,
    });
  });

  it.each([
    [
      'FERRY_RETENTION_OPERATION_LOGS_DAYS',
      '0',
      /FERRY_RETENTION_OPERATION_LOGS_DAYS must be a whole number of days from 1 to 3650, got "0"/,
    ],
    [
      'FERRY_RETENTION_OPERATIONS_DAYS',
      '90d',
      /FERRY_RETENTION_OPERATIONS_DAYS must be a whole number of days.*got "90d"/,
    ],
    ['FERRY_RETENTION_STORED_PAGES_DAYS', '-3', /FERRY_RETENTION_STORED_PAGES_DAYS must be a whole number/],
    ['FERRY_RETENTION_TEMPORAL_DAYS', '1.5', /FERRY_RETENTION_TEMPORAL_DAYS must be a whole number/],
    ['FERRY_RETENTION_DELIVERY_ATTEMPTS_DAYS', '5000', /from 1 to 3650, got "5000"/],
    [
      'FERRY_RETENTION_SCHEDULE',
      'every hour',
      /FERRY_RETENTION_SCHEDULE: "every hour" is not a valid cron expression/,
    ],
    ['FERRY_RETENTION_BATCH_SIZE', '5', /FERRY_RETENTION_BATCH_SIZE must be from 10 to 50000, got "5"/],
    [
      'FERRY_RETENTION_BATCH_SIZE',
      'many',
      /FERRY_RETENTION_BATCH_SIZE must be a non-negative integer, got "many"/,
    ],
  ])('refuses %s=%s', (name, value, message) => {
    expect(() => load({ [name]: value })).toThrow(ConfigError);
    expect(() => load({ [name]: value })).toThrow(message);
  });

  it('refuses an events window no longer than the delivery retries it must outlive', () => {
    // The default schedule retries for about 27.6 hours: one day is too short, two are enough.
    expect(() => load({ FERRY_RETENTION_EVENTS_DAYS: '1' })).toThrow(
      /FERRY_RETENTION_EVENTS_DAYS \(1\) must be longer than FERRY_DELIVERY_RETRY_SCHEDULE, whose retries last 1\.1 days/,
    );
    expect(() => load({ FERRY_RETENTION_SUBSCRIPTION_EVENTS_DAYS: '1' })).toThrow(
      /FERRY_RETENTION_SUBSCRIPTION_EVENTS_DAYS \(1\)/,
    );
    expect(load({ FERRY_RETENTION_EVENTS_DAYS: '2' }).retention.eventsDays).toBe(2);
    expect(
      load({ FERRY_RETENTION_EVENTS_DAYS: '1', FERRY_DELIVERY_RETRY_SCHEDULE: '0,5s,5m' }).retention
        .eventsDays,
    ).toBe(1);
  });

  it('stops `ferry worker` before it starts anything, saying which setting is wrong', () => {
    const result = spawnSync(process.execPath, ['bin/ferry.js', 'worker'], {
      env: { ...process.env, FERRY_RETENTION_READ_CHECKPOINTS_DAYS: 'forever' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      'ferry: FERRY_RETENTION_READ_CHECKPOINTS_DAYS must be a whole number of days from 1 to 3650, got "forever"',
    );
  });
});
