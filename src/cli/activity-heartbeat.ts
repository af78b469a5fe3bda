import { Context } from '@temporalio/activity';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';

/** Often enough for the shortest heartbeat timeout Ferry sets (20 s); the SDK throttles what it sends. */
const BEAT_MS = 2000;

/**
 * Every activity heartbeats while it runs, so each can carry a short heartbeat timeout: when a
 * worker dies, Temporal hands its activities to another worker within that timeout instead of
 * waiting out a start-to-close timeout of minutes (and every read queued behind waits less).
 */
export const heartbeatEveryActivity: ActivityInterceptorsFactory = () => ({
  inbound: {
    async execute(input, next) {
      const context = Context.current();
      // A local activity runs inside its workflow's task: the SDK keeps that task alive instead.
      if (context.info.isLocal) return next(input);
      const beat = setInterval(() => context.heartbeat(), BEAT_MS);
      try {
        return await next(input);
      } finally {
        clearInterval(beat);
      }
    },
  },
});
