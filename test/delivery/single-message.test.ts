import { describe, expect, it } from '@jest/globals';
import type { DeliveryResult } from '../../src/delivery/deliver.js';
import { deliverSingleMessage, type DestinationLedger } from '../../src/delivery/single-message.js';

const schedule = [0, 5_000, 60_000];
const time = new Date('2026-01-01T00:00:00Z');

/** A ledger that records the order of its steps and answers `send` with `answer`. */
function ledger(answer: DeliveryResult, disabled = false) {
  const steps: string[] = [];
  const value: DestinationLedger<string> = {
    open: async () => (steps.push('open'), { open: 'destination' }),
    begin: async () => (steps.push('begin'), 'ledger-1'),
    send: async () => (steps.push('send'), answer),
    delivered: async (_open, _result, _time, ledgerId) => void steps.push(`delivered ${ledgerId}`),
    failed: async (result, _time, ledgerId) => {
      steps.push(`failed ${ledgerId}`);
      return {
        delivered: false,
        retryable: result.retryable && !disabled,
        disabled,
        error: result.error,
        ...(result.retryAfterMs !== undefined && { retryAfterMs: result.retryAfterMs }),
      };
    },
  };
  return { steps, value };
}

const failure = (retryable: boolean, retryAfterMs?: number): DeliveryResult => ({
  ok: false,
  status: 503,
  durationMs: 3,
  responseBody: '',
  retryable,
  gone: false,
  ...(retryAfterMs !== undefined && { retryAfterMs }),
  error: 'HTTP 503',
});

describe('one single message, one path', () => {
  it('writes the ledger row before the message leaves, and completes it with the answer', async () => {
    const { steps, value } = ledger({
      ok: true,
      status: 200,
      durationMs: 2,
      responseBody: '',
      retryable: false,
      gone: false,
    });
    const outcome = await deliverSingleMessage(value, { attempt: 1, retryScheduleMs: schedule, time });
    expect(steps).toEqual(['open', 'begin', 'send', 'delivered ledger-1']);
    expect(outcome).toEqual({ delivered: true, retryable: false, disabled: false, status: 200 });
  });

  it('plans the next attempt from the retry schedule, and none once it is spent', async () => {
    const second = await deliverSingleMessage(ledger(failure(true)).value, {
      attempt: 1,
      retryScheduleMs: schedule,
      time,
    });
    expect(second).toMatchObject({ delivered: false, retryable: true, nextAttemptInMs: 5_000 });
    const last = await deliverSingleMessage(ledger(failure(true)).value, {
      attempt: 3,
      retryScheduleMs: schedule,
      time,
    });
    expect(last.retryable).toBe(true);
    expect(last.nextAttemptInMs).toBeUndefined();
  });

  it('plans no attempt after a failure no retry fixes, or once the destination is disabled', async () => {
    const { steps, value } = ledger(failure(true), true);
    const outcome = await deliverSingleMessage(value, { attempt: 1, retryScheduleMs: schedule, time });
    expect(steps).toEqual(['open', 'begin', 'send', 'failed ledger-1']);
    expect(outcome).toMatchObject({ delivered: false, retryable: false, disabled: true });
    expect(outcome.nextAttemptInMs).toBeUndefined();
    const refused = await deliverSingleMessage(ledger(failure(false)).value, {
      attempt: 1,
      retryScheduleMs: schedule,
      time,
    });
    expect(refused.nextAttemptInMs).toBeUndefined();
  });

  it('sends nothing to a destination it may not open', async () => {
    const { steps, value } = ledger(failure(true));
    value.open = async () => ({
      refused: { delivered: false, retryable: false, disabled: true, error: 'disabled' },
    });
    const outcome = await deliverSingleMessage(value, { attempt: 1, retryScheduleMs: schedule, time });
    expect(steps).toEqual([]);
    expect(outcome).toEqual({ delivered: false, retryable: false, disabled: true, error: 'disabled' });
  });

  it('waits for a longer Retry-After than the schedule asks', async () => {
    const outcome = await deliverSingleMessage(ledger(failure(true, 30_000)).value, {
      attempt: 1,
      retryScheduleMs: schedule,
      time,
    });
    expect(outcome.nextAttemptInMs).toBe(30_000);
  });
});
