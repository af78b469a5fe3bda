import {
  nextSpreadFireTime,
  NO_SPREAD,
  ScheduleBook,
  spreadFraction,
  type DueRun,
  type ObjectScheduleConfig,
  type ScheduleBookState,
} from '../../workflows/schedule.js';
import { CronError, nextFireTime, upcomingFireTimes, validateCron } from '../../src/core/cron.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const t0 = new Date('2026-03-02T00:00:00.000Z');
const at = (ms: number) => new Date(t0.getTime() + ms);
const clock = (date: Date | string) => new Date(date).toISOString().slice(11, 16);

interface Run extends DueRun {
  startedAt: Date;
  finishedAt: Date;
}

/**
 * Drives a book the way the installation workflow does: start what is due, sleep until the next fire
 * or the next finish, repeat. `duration` says how long each run takes; `actions` run at given times.
 * Returns every run started before `until`, in start order.
 */
function simulate(
  book: ScheduleBook,
  until: Date,
  options: {
    from?: Date;
    duration?: (run: DueRun) => number;
    succeeded?: (run: DueRun) => boolean;
    actions?: [Date, (now: Date) => void][];
  } = {},
): Run[] {
  const duration = options.duration ?? (() => 0);
  const actions = [...(options.actions ?? [])].sort((a, b) => a[0].getTime() - b[0].getTime());
  const inFlight: Run[] = [];
  const started: Run[] = [];
  let now = options.from ?? t0;
  for (let steps = 0; steps < 100_000; steps++) {
    while (actions.length && actions[0][0].getTime() <= now.getTime()) actions.shift()![1](now);
    inFlight.sort((a, b) => a.finishedAt.getTime() - b.finishedAt.getTime());
    while (inFlight.length && inFlight[0].finishedAt.getTime() <= now.getTime()) {
      const run = inFlight.shift()!;
      book.finish(run.objectName, now, { succeeded: options.succeeded?.(run) ?? true });
    }
    for (const due of book.takeDueRuns(now)) {
      const run = { ...due, startedAt: now, finishedAt: new Date(now.getTime() + duration(due)) };
      started.push(run);
      if (duration(due) === 0)
        book.finish(run.objectName, now, { succeeded: options.succeeded?.(run) ?? true });
      else inFlight.push(run);
    }
    const candidates = [
      book.nextWakeAt(now)?.getTime(),
      inFlight[0]?.finishedAt.getTime(),
      actions[0]?.[0].getTime(),
    ].filter((time): time is number => time !== undefined && time > now.getTime());
    const next = Math.min(...candidates);
    if (!Number.isFinite(next) || next > until.getTime()) break;
    now = new Date(next);
  }
  return started;
}

function book(configs: ObjectScheduleConfig[], now = t0): ScheduleBook {
  const created = new ScheduleBook();
  created.configure(configs, now);
  return created;
}

const fires = (runs: Run[], objectName?: string) =>
  runs.filter((run) => !objectName || run.objectName === objectName).map((run) => clock(run.startedAt));

describe('nextFireTime', () => {
  it('gives the first fire strictly after the given time', () => {
    expect(nextFireTime('*/15 * * * *', t0).toISOString()).toBe('2026-03-02T00:15:00.000Z');
    expect(nextFireTime('*/15 * * * *', at(15 * MINUTE - 1)).toISOString()).toBe('2026-03-02T00:15:00.000Z');
    expect(nextFireTime('@hourly', at(30 * MINUTE)).toISOString()).toBe('2026-03-02T01:00:00.000Z');
  });

  it('reads the expression in the given time zone, across daylight saving', () => {
    expect(nextFireTime('0 9 * * *', new Date('2026-01-10T00:00:00Z'), 'Europe/Paris').toISOString()).toBe(
      '2026-01-10T08:00:00.000Z',
    );
    expect(nextFireTime('0 9 * * *', new Date('2026-07-10T00:00:00Z'), 'Europe/Paris').toISOString()).toBe(
      '2026-07-10T07:00:00.000Z',
    );
  });

  it('throws CronError for invalid expressions, zones and expressions that never fire', () => {
    expect(() => nextFireTime('61 * * * *', t0)).toThrow(CronError);
    expect(() => nextFireTime('* * * * *', t0, 'Mars/Olympus')).toThrow(
      '"Mars/Olympus" is not a known time zone',
    );
    expect(() => nextFireTime('0 0 31 2 *', t0)).toThrow('"0 0 31 2 *" never fires');
  });

  it('lists upcoming fires', () => {
    expect(upcomingFireTimes('0 */6 * * *', t0, 3).map(clock)).toEqual(['06:00', '12:00', '18:00']);
  });
});

describe('validateCron', () => {
  const min = { minIntervalSeconds: 300 };

  it('accepts expressions at or above the minimum interval', () => {
    for (const cron of [
      '*/5 * * * *',
      '*/30 * * * *',
      '0 * * * *',
      '@daily',
      '0 9 * * 1-5',
      '0,5,10 * * * *',
    ]) {
      expect(validateCron(cron, min)).toEqual({ ok: true });
    }
  });

  it('accepts every expression that fires when the minimum is a minute or less (fires are whole minutes)', () => {
    for (const minIntervalSeconds of [0, 30, 60]) {
      for (const cron of ['* * * * *', '0,1 12 15 * *', '*/2 * * * *']) {
        expect(validateCron(cron, { minIntervalSeconds })).toEqual({ ok: true });
      }
      expect(validateCron('0 0 30 2 *', { minIntervalSeconds }).ok).toBe(false);
    }
    expect(validateCron('* * * * *', { minIntervalSeconds: 61 }).ok).toBe(false);
  });

  it('agrees with the closest two of a thousand fires, for minutes, hours and days of every kind', () => {
    const minuteFields = [
      '*/5',
      '*/7',
      '0',
      '0,30',
      '0,3,30',
      '1-59/5',
      '0-55/5',
      '15,45',
      '59',
      '0,58',
      '*/6',
    ];
    const hourFields = ['*', '0,23', '*/2', '9-17', '23', '1,2', '0-22'];
    const dayFields = ['* * *', '* * 1-5', '1,31 * *', '28-31 2 *'];
    const from = new Date(Date.UTC(2026, 0, 1));
    let checked = 0;
    for (const minute of minuteFields) {
      for (const hour of hourFields) {
        for (const days of dayFields) {
          // A spread of the combinations: the brute force costs some 50 ms each.
          if (++checked % 5) continue;
          const cron = `${minute} ${hour} ${days}`;
          const fires = upcomingFireTimes(cron, new Date(from.getTime() - 1), 1000).map((fire) =>
            fire.getTime(),
          );
          const closest = Math.min(...fires.slice(1).map((fire, index) => fire - fires[index]));
          for (const minIntervalSeconds of [300, 3600]) {
            expect([cron, minIntervalSeconds, validateCron(cron, { minIntervalSeconds }).ok]).toEqual([
              cron,
              minIntervalSeconds,
              closest >= minIntervalSeconds * 1000,
            ]);
          }
        }
      }
    }
  });

  it('rejects expressions that fire more often than the minimum, however rarely they do', () => {
    expect(validateCron('*/4 * * * *', min)).toEqual({
      ok: false,
      reason:
        '"*/4 * * * *" fires 240 s apart (at 2026-01-01T00:04:00.000Z and 2026-01-01T00:08:00.000Z); the minimum interval is 300 s',
    });
    expect(validateCron('* * * * *', min).ok).toBe(false);
    // Twice a month, one minute apart.
    expect(validateCron('0,1 12 15 * *', min).ok).toBe(false);
    // Uneven minute lists: :00 to :03 is three minutes.
    expect(validateCron('0,3,30,55 * * * *', min).ok).toBe(false);
    // Only across midnight, from 23:58 on the 31st to 00:00 on the 1st.
    expect(validateCron('0,58 0,23 1,31 * *', min)).toMatchObject({
      ok: false,
      reason: expect.stringContaining(
        'fires 120 s apart (at 2026-01-31T23:58:00.000Z and 2026-02-01T00:00:00.000Z)',
      ),
    });
  });

  it('rejects invalid expressions, second-level expressions, unknown zones and expressions that never fire', () => {
    expect(validateCron('every minute', min)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('"every minute" is not a valid cron expression'),
    });
    expect(validateCron('0 */10 * * * *', min)).toMatchObject({
      ok: false,
      reason: expect.stringContaining('5 parts'),
    });
    expect(validateCron('0 * * * *', { ...min, timezone: 'Nowhere/City' })).toEqual({
      ok: false,
      reason: '"Nowhere/City" is not a known time zone',
    });
    expect(validateCron('0 0 30 2 *', min)).toEqual({ ok: false, reason: '"0 0 30 2 *" never fires' });
  });
});

describe('ScheduleBook', () => {
  it('fires an every-15-minutes object 96 times over a day', () => {
    const runs = simulate(
      book([{ objectName: 'contact', cron: '*/15 * * * *', backfill: false }]),
      at(24 * HOUR),
    );
    expect(runs).toHaveLength(96);
    expect(fires(runs).slice(0, 3)).toEqual(['00:15', '00:30', '00:45']);
    expect(runs.at(-1)!.startedAt.toISOString()).toBe('2026-03-03T00:00:00.000Z');
    expect(new Set(runs.map((run) => run.kind))).toEqual(new Set(['scheduled']));
  });

  it('interleaves objects with different schedules, each on its own cron', () => {
    const schedules = book([
      { objectName: 'contact', cron: '*/15 * * * *', backfill: false },
      { objectName: 'account', cron: '0 * * * *', backfill: false },
      { objectName: 'lead', cron: '*/40 * * * *', backfill: false },
    ]);
    expect(schedules.nextWakeAt(t0)?.toISOString()).toBe('2026-03-02T00:15:00.000Z');
    const runs = simulate(schedules, at(2 * HOUR));
    expect(fires(runs, 'contact')).toEqual([
      '00:15',
      '00:30',
      '00:45',
      '01:00',
      '01:15',
      '01:30',
      '01:45',
      '02:00',
    ]);
    expect(fires(runs, 'account')).toEqual(['01:00', '02:00']);
    expect(fires(runs, 'lead')).toEqual(['00:40', '01:00', '01:40', '02:00']);
    expect(runs.map((run) => `${clock(run.startedAt)} ${run.objectName}`).slice(0, 7)).toEqual([
      '00:15 contact',
      '00:30 contact',
      '00:40 lead',
      '00:45 contact',
      '01:00 contact',
      '01:00 account',
      '01:00 lead',
    ]);
  });

  it('never overlaps two reads of one object: a long read pushes the next fire to after it', () => {
    const runs = simulate(
      book([{ objectName: 'contact', cron: '*/15 * * * *', backfill: false }]),
      at(2 * HOUR),
      {
        duration: () => 20 * MINUTE,
      },
    );
    expect(fires(runs)).toEqual(['00:15', '00:45', '01:15', '01:45']);
    for (let index = 1; index < runs.length; index++) {
      expect(runs[index].startedAt.getTime()).toBeGreaterThanOrEqual(runs[index - 1].finishedAt.getTime());
    }
  });

  it('keeps a fire that came due during a triggered read pending, and runs it when that read ends', () => {
    const schedules = book([{ objectName: 'contact', cron: '*/15 * * * *', backfill: false }]);
    const runs = simulate(schedules, at(HOUR), {
      duration: (run) => (run.kind === 'triggered' ? 30 * MINUTE : 0),
      actions: [[at(5 * MINUTE), (now) => schedules.trigger('contact', { operationId: 'op-t' }, now)]],
    });
    expect(runs.map((run) => `${clock(run.startedAt)} ${run.kind}`)).toEqual([
      '00:05 triggered',
      '00:35 scheduled',
      '00:45 scheduled',
      '01:00 scheduled',
    ]);
    expect(runs[0]).toMatchObject({ operationId: 'op-t', dueAt: at(5 * MINUTE).toISOString() });
  });

  it('runs nothing while paused, and resumes from the resume time without replaying missed fires', () => {
    const schedules = book([
      { objectName: 'contact', cron: '*/15 * * * *', backfill: false },
      { objectName: 'account', cron: '0 * * * *', backfill: false },
    ]);
    const runs = simulate(schedules, at(4 * HOUR), {
      actions: [
        [at(50 * MINUTE), () => expect(schedules.pause(['contact'])).toEqual(['contact'])],
        [
          at(HOUR + 10 * MINUTE),
          (now) => schedules.trigger('contact', { operationId: 'op-while-paused' }, now),
        ],
        [at(3 * HOUR + 7 * MINUTE), (now) => expect(schedules.resume(['contact'], now)).toEqual(['contact'])],
      ],
    });
    expect(fires(runs, 'contact')).toEqual([
      '00:15',
      '00:30',
      '00:45',
      '03:07',
      '03:15',
      '03:30',
      '03:45',
      '04:00',
    ]);
    expect(runs.find((run) => run.kind === 'triggered')).toMatchObject({
      objectName: 'contact',
      operationId: 'op-while-paused',
    });
    expect(fires(runs, 'account')).toEqual(['01:00', '02:00', '03:00', '04:00']);
  });

  it('pauses and resumes every object when none is named, and shows no next fire while paused', () => {
    const schedules = book([
      { objectName: 'contact', cron: '*/15 * * * *', backfill: false },
      { objectName: 'account', cron: '0 * * * *', backfill: false },
    ]);
    expect(schedules.pause()).toEqual(['contact', 'account']);
    expect(schedules.pause()).toEqual([]);
    expect(schedules.objects().map((object) => [object.paused, object.nextFireAt])).toEqual([
      [true, undefined],
      [true, undefined],
    ]);
    expect(schedules.nextWakeAt(t0)).toBeUndefined();
    expect(schedules.dueRuns(at(5 * HOUR))).toEqual([]);
    schedules.resume(undefined, at(HOUR + MINUTE));
    expect(schedules.nextWakeAt(at(HOUR + MINUTE))?.toISOString()).toBe('2026-03-02T01:15:00.000Z');
  });

  it('replans when the cron changes, keeping a fire that is already due', () => {
    const schedules = book([
      { objectName: 'contact', cron: '*/15 * * * *', backfill: false },
      { objectName: 'account', cron: '*/15 * * * *', backfill: false },
    ]);
    const runs = simulate(schedules, at(3 * HOUR), {
      actions: [
        [
          at(20 * MINUTE),
          (now) =>
            expect(
              schedules.configure(
                [
                  { objectName: 'contact', cron: '0 * * * *', backfill: false },
                  { objectName: 'account', cron: '*/15 * * * *', backfill: false },
                ],
                now,
              ),
            ).toEqual({ added: [], changed: ['contact'], removed: [] }),
        ],
      ],
    });
    expect(fires(runs, 'contact')).toEqual(['00:15', '01:00', '02:00', '03:00']);
    expect(fires(runs, 'account')).toHaveLength(12);

    const waiting = book([{ objectName: 'contact', cron: '*/15 * * * *', backfill: false }]);
    waiting.trigger('contact', {}, t0);
    waiting.takeDueRuns(t0);
    waiting.configure([{ objectName: 'contact', cron: '0 0 * * *', backfill: false }], at(20 * MINUTE));
    waiting.finish('contact', at(20 * MINUTE), { succeeded: true });
    expect(waiting.dueRuns(at(20 * MINUTE))).toMatchObject([
      { kind: 'scheduled', dueAt: at(15 * MINUTE).toISOString() },
    ]);
  });

  it('adds and removes objects, ignoring the finish of a removed object', () => {
    const schedules = book([{ objectName: 'contact', cron: '*/15 * * * *', backfill: false }]);
    schedules.takeDueRuns(at(15 * MINUTE));
    const result = schedules.configure(
      [{ objectName: 'account', cron: '0 * * * *', backfill: false }],
      at(16 * MINUTE),
    );
    expect(result).toEqual({ added: ['account'], changed: [], removed: ['contact'] });
    expect(() => schedules.finish('contact', at(17 * MINUTE), { succeeded: true })).not.toThrow();
    expect(schedules.objects().map((object) => object.objectName)).toEqual(['account']);
    expect(() => schedules.trigger('contact', {}, at(18 * MINUTE))).toThrow(
      'no read schedule for object "contact"',
    );
  });

  it('refuses a config with an invalid cron without changing anything', () => {
    const schedules = book([{ objectName: 'contact', cron: '*/15 * * * *', backfill: false }]);
    const before = schedules.toJSON();
    expect(() =>
      schedules.configure(
        [
          { objectName: 'contact', cron: '0 * * * *', backfill: false },
          { objectName: 'account', cron: 'bad', backfill: false },
        ],
        t0,
      ),
    ).toThrow(CronError);
    expect(schedules.toJSON()).toEqual(before);
  });

  describe('backfill', () => {
    it('runs a new object’s backfill at once, then follows the schedule', () => {
      const runs = simulate(
        book([{ objectName: 'contact', cron: '0 * * * *', backfill: true }]),
        at(2 * HOUR),
        {
          duration: (run) => (run.kind === 'backfill' ? 90 * MINUTE : 0),
        },
      );
      expect(runs.map((run) => `${clock(run.startedAt)} ${run.kind}`)).toEqual([
        '00:00 backfill',
        '02:00 scheduled',
      ]);
    });

    it('retries a failed backfill at the next fire, as a backfill', () => {
      let failures = 2;
      const runs = simulate(
        book([{ objectName: 'contact', cron: '0 * * * *', backfill: true }]),
        at(4 * HOUR),
        {
          succeeded: (run) => run.kind !== 'backfill' || failures-- <= 0,
        },
      );
      expect(runs.map((run) => `${clock(run.startedAt)} ${run.kind}`)).toEqual([
        '00:00 backfill',
        '01:00 backfill',
        '02:00 backfill',
        '03:00 scheduled',
        '04:00 scheduled',
      ]);
    });

    it('runs the backfill before a triggered read of an object still needing it', () => {
      const schedules = book([{ objectName: 'contact', cron: '0 * * * *', backfill: true }]);
      schedules.pause(['contact']);
      schedules.trigger('contact', { operationId: 'op-1' }, at(MINUTE));
      schedules.resume(['contact'], at(2 * MINUTE));
      const runs = simulate(schedules, at(90 * MINUTE), {
        from: at(2 * MINUTE),
        duration: () => 10 * MINUTE,
      });
      expect(
        runs.map((run) => `${clock(run.startedAt)} ${run.kind} ${run.operationId ?? ''}`.trim()),
      ).toEqual(['00:02 backfill', '00:12 triggered op-1', '01:00 scheduled']);
    });
  });

  it('round-trips through plain JSON for continue-as-new and carries on identically', () => {
    const schedules = book([
      { objectName: 'contact', cron: '*/15 * * * *', backfill: true },
      { objectName: 'account', cron: '0 * * * *', timezone: 'America/New_York', backfill: false },
      { objectName: 'lead', cron: '*/30 * * * *', backfill: false },
    ]);
    schedules.takeDueRuns(t0);
    schedules.trigger('account', { operationId: 'op-9', sinceTimestamp: '2026-01-01T00:00:00Z' }, at(MINUTE));
    schedules.pause(['lead']);
    const state = JSON.parse(JSON.stringify(schedules)) as ScheduleBookState;
    expect(state.version).toBe(1);
    expect(state.objects.find((object) => object.objectName === 'contact')?.running).toMatchObject({
      kind: 'backfill',
    });

    const rebuilt = ScheduleBook.fromJSON(state);
    expect(rebuilt.toJSON()).toEqual(schedules.toJSON());
    const options = { from: at(MINUTE), duration: () => 7 * MINUTE };
    schedules.finish('contact', at(MINUTE), { succeeded: true });
    rebuilt.finish('contact', at(MINUTE), { succeeded: true });
    expect(simulate(rebuilt, at(6 * HOUR), options)).toEqual(simulate(schedules, at(6 * HOUR), options));
    expect(rebuilt.toJSON()).toEqual(schedules.toJSON());
  });

  it('refuses state of an unknown version', () => {
    expect(() => ScheduleBook.fromJSON({ version: 2, objects: [] } as unknown as ScheduleBookState)).toThrow(
      'unknown schedule state version 2',
    );
  });

  it('reports the wait until the next due read for the workflow timer', () => {
    const schedules = book([{ objectName: 'contact', cron: '*/15 * * * *', backfill: false }]);
    expect(schedules.msUntilNextWake(at(5 * MINUTE))).toBe(10 * MINUTE);
    schedules.trigger('contact', {}, at(6 * MINUTE));
    expect(schedules.msUntilNextWake(at(6 * MINUTE))).toBe(0);
    schedules.takeDueRuns(at(6 * MINUTE));
    expect(schedules.running()).toEqual(['contact']);
    // A running object wakes nobody: its finish does.
    expect(schedules.msUntilNextWake(at(6 * MINUTE))).toBeUndefined();
  });
});

describe('spread fires', () => {
  const SECOND = 1000;
  const spread = (fraction: number, maxMs = 5 * MINUTE) => ({ maxMs, fraction });

  it('fires each cron time plus the same fraction of the window, never more than the gap', () => {
    // Every 2 minutes: the window is capped at the 2-minute gap, so 0.5 of it is 60 s.
    expect(nextSpreadFireTime('*/2 * * * *', t0, spread(0.5))?.toISOString()).toBe(
      '2026-03-02T00:01:00.000Z',
    );
    // Even the last moment of the window comes before the next cron time.
    expect(nextSpreadFireTime('*/2 * * * *', t0, spread(0.999))!.getTime()).toBeLessThan(
      at(2 * MINUTE).getTime(),
    );
    // Hourly: the full 5-minute window applies.
    expect(nextSpreadFireTime('0 * * * *', t0, spread(0.5))?.toISOString()).toBe('2026-03-02T00:02:30.000Z');
    // No spread: exactly the cron time, as nextFireTime gives it.
    expect(nextSpreadFireTime('0 * * * *', t0, NO_SPREAD)).toEqual(nextFireTime('0 * * * *', t0));
    expect(nextSpreadFireTime('0 * * * *', t0, spread(0.99, 0))).toEqual(nextFireTime('0 * * * *', t0));
  });

  it("plans the current cron time's fire when its offset is still ahead", () => {
    const quarter = spread(0.25);
    // 00:01:00 is after the cron time 00:00 but before its fire at 00:01:15.
    expect(nextSpreadFireTime('*/5 * * * *', at(MINUTE), quarter)?.toISOString()).toBe(
      '2026-03-02T00:01:15.000Z',
    );
    // Strictly after: at the fire itself, the next is the following cron time's.
    expect(nextSpreadFireTime('*/5 * * * *', at(75 * SECOND), quarter)?.toISOString()).toBe(
      '2026-03-02T00:06:15.000Z',
    );
  });

  it('keeps fires in cron order when gaps differ (9:00 and 9:10, then the next day)', () => {
    const late = spread(0.9, HOUR);
    const fires: string[] = [];
    let after = t0;
    for (let index = 0; index < 3; index++) {
      const fire = nextSpreadFireTime('0,10 9 * * *', after, late)!;
      fires.push(fire.toISOString());
      after = fire;
    }
    // 9:00 + 0.9 × 10 min (the gap); 9:10 + 0.9 × 1 h (the gap to tomorrow is long); tomorrow 9:00 again.
    expect(fires).toEqual([
      '2026-03-02T09:09:00.000Z',
      '2026-03-02T10:04:00.000Z',
      '2026-03-03T09:09:00.000Z',
    ]);
  });

  it('gives each installation a stable fraction, evenly spread over many installations', () => {
    expect(spreadFraction('0b6f1f0e-7f7c-4c55-9b1b-0c2f7d4f6a10')).toBe(
      spreadFraction('0b6f1f0e-7f7c-4c55-9b1b-0c2f7d4f6a10'),
    );
    const fractions = Array.from({ length: 1000 }, (_, index) => spreadFraction(`installation-${index}`));
    expect(Math.min(...fractions)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...fractions)).toBeLessThan(1);
    // Ten equal buckets each hold roughly a tenth.
    const buckets = Array.from({ length: 10 }, () => 0);
    for (const fraction of fractions) buckets[Math.floor(fraction * 10)]++;
    for (const count of buckets) expect(count).toBeGreaterThan(60);
  });

  it('runs a spread book on its offsets: schedules, replans after a finish, and resumes', () => {
    const schedules = new ScheduleBook(undefined, spread(0.2));
    schedules.configure([{ objectName: 'contact', cron: '0 * * * *', backfill: false }], t0);
    // 0.2 × 5 min = 60 s after each hour; a run of 90 s replans from its finish.
    const runs = simulate(schedules, at(3 * HOUR), {
      duration: () => 90 * SECOND,
      actions: [
        [at(HOUR + 30 * MINUTE), () => schedules.pause()],
        [at(2 * HOUR + 30 * SECOND), (now) => schedules.resume(undefined, now)],
      ],
    });
    expect(runs.map((run) => run.startedAt.toISOString())).toEqual([
      '2026-03-02T00:01:00.000Z',
      '2026-03-02T01:01:00.000Z',
      // Paused at 01:30; resumed at 02:00:30, before 02:00's fire at 02:01:00: that fire still happens.
      '2026-03-02T02:01:00.000Z',
    ]);
    expect(runs.every((run) => run.dueAt === run.startedAt.toISOString())).toBe(true);
    expect(schedules.get('contact')?.nextFireAt).toBe('2026-03-02T03:01:00.000Z');
  });

  it('replans from the spread after a cron change, and carries no spread in its state', () => {
    const schedules = new ScheduleBook(undefined, spread(0.5));
    schedules.configure([{ objectName: 'contact', cron: '0 * * * *', backfill: false }], t0);
    expect(schedules.get('contact')?.nextFireAt).toBe('2026-03-02T00:02:30.000Z');
    schedules.configure([{ objectName: 'contact', cron: '30 * * * *', backfill: false }], at(MINUTE));
    expect(schedules.get('contact')?.nextFireAt).toBe('2026-03-02T00:32:30.000Z');
    expect(JSON.stringify(schedules.toJSON())).not.toContain('fraction');
  });
});
