import type { BackfillRequest, TriggerReadRequest } from '../src/temporal/contracts/installation.js';

/**
 * What an operator may ask of an installation's reads, checked before anything enters history: the
 * Update validators throw these problems, and the Signals log them. Pure and deterministic.
 */

const DAY_MS = 24 * 60 * 60 * 1000;
const MAX_BACKFILL_DAYS = 36_500;

/** The window a requested read covers; `requestedWindow` says the manifest's backfill period does not apply. */
export interface RequestedWindow {
  sinceTimestamp?: string;
  untilTimestamp?: string;
  requestedWindow: boolean;
}

export type ObjectStatus = 'unknown' | 'paused' | 'active';

/** Why a read of `objectName` cannot be asked for now, or undefined. */
export function objectProblem(objectName: unknown, status: ObjectStatus): string | undefined {
  if (typeof objectName !== 'string' || !objectName) return 'objectName is required';
  if (status === 'unknown') return `"${objectName}" is not read by this installation (any more)`;
  if (status === 'paused') return `"${objectName}" is paused; resume it first`;
  return undefined;
}

function timestampProblem(name: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || Number.isNaN(Date.parse(value))) return `${name} must be an ISO 8601 time`;
  return undefined;
}

/** Why a triggered read's window is malformed, or undefined. */
export function triggerWindowProblem(request: Omit<TriggerReadRequest, 'operationId'>): string | undefined {
  const problem =
    timestampProblem('sinceTimestamp', request.sinceTimestamp) ??
    timestampProblem('untilTimestamp', request.untilTimestamp);
  if (problem) return problem;
  if (
    request.sinceTimestamp &&
    request.untilTimestamp &&
    Date.parse(request.sinceTimestamp) >= Date.parse(request.untilTimestamp)
  ) {
    return 'untilTimestamp must be after sinceTimestamp';
  }
  return undefined;
}

/**
 * The window of a requested backfill: `days` back from now, the full history, or `sinceTimestamp`
 * (to `untilTimestamp`); none given means the manifest's `backfill.defaultPeriod`, which an object
 * without one (or with `days: 0`) does not have. Returns the window or the problem.
 */
export function backfillWindow(
  request: BackfillRequest,
  manifestHasBackfill: boolean,
  now: Date,
): RequestedWindow | { problem: string } {
  const given = [
    request.days !== undefined,
    request.fullHistory === true,
    request.sinceTimestamp !== undefined,
  ];
  if (given.filter(Boolean).length > 1) {
    return { problem: 'give one of days, fullHistory or sinceTimestamp, not several' };
  }
  if (request.fullHistory !== undefined && request.fullHistory !== true) {
    return { problem: 'fullHistory can only be true' };
  }
  const timeProblem =
    timestampProblem('sinceTimestamp', request.sinceTimestamp) ??
    timestampProblem('untilTimestamp', request.untilTimestamp);
  if (timeProblem) return { problem: timeProblem };
  if (request.untilTimestamp !== undefined && request.days !== undefined) {
    return { problem: 'untilTimestamp goes with sinceTimestamp or fullHistory, not with days' };
  }
  if (request.days !== undefined) {
    if (!Number.isInteger(request.days) || request.days < 1 || request.days > MAX_BACKFILL_DAYS) {
      return { problem: `days must be a whole number from 1 to ${MAX_BACKFILL_DAYS}` };
    }
    return {
      sinceTimestamp: new Date(now.getTime() - request.days * DAY_MS).toISOString(),
      requestedWindow: true,
    };
  }
  if (request.sinceTimestamp !== undefined || request.fullHistory) {
    if (
      request.sinceTimestamp &&
      request.untilTimestamp &&
      Date.parse(request.sinceTimestamp) >= Date.parse(request.untilTimestamp)
    ) {
      return { problem: 'untilTimestamp must be after sinceTimestamp' };
    }
    return {
      ...(request.sinceTimestamp && { sinceTimestamp: request.sinceTimestamp }),
      ...(request.untilTimestamp && { untilTimestamp: request.untilTimestamp }),
      requestedWindow: true,
    };
  }
  if (request.untilTimestamp !== undefined)
    return { problem: 'untilTimestamp goes with sinceTimestamp or fullHistory' };
  if (!manifestHasBackfill) {
    return {
      problem:
        "the object's manifest has no backfill (backfill.defaultPeriod absent or days: 0); give days, fullHistory or sinceTimestamp",
    };
  }
  return { requestedWindow: false };
}
