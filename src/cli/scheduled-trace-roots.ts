import { ROOT_CONTEXT, SpanKind, context, trace, type Link } from '@opentelemetry/api';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import {
  extractContextFromHeaders,
  TRACE_HEADER,
} from '@temporalio/interceptors-opentelemetry/lib/instrumentation.js';

/**
 * An installation's workflow lives for months and carries the trace context of the request that
 * created it: without this, every scheduled read it ever ran would be one more span of that one
 * creation trace. The work a schedule starts gets a trace of its own instead, with a link back to
 * the workflow's, so a trace is one read and an operator can still walk from it to the installation.
 *
 * Placed before Temporal's activity interceptor: this opens the root span and takes the workflow's
 * context out of the headers, so the activity's span opens under it.
 */
const SCHEDULED_ACTIVITIES = new Set(['readObjectInline']);

const tracer = trace.getTracer('ferry');

export const scheduledWorkTraceRoots: ActivityInterceptorsFactory = (ctx) => ({
  inbound: {
    async execute(input, next) {
      const activityType = ctx.info.activityType;
      if (!SCHEDULED_ACTIVITIES.has(activityType)) return next(input);
      const workflowSpan = trace.getSpanContext(extractContextFromHeaders(input.headers) ?? ROOT_CONTEXT);
      const links: Link[] = workflowSpan ? [{ context: workflowSpan }] : [];
      const { [TRACE_HEADER]: _workflowContext, ...headers } = input.headers;
      const span = tracer.startSpan(
        `scheduled:${activityType}`,
        {
          root: true,
          kind: SpanKind.INTERNAL,
          links,
          attributes: { temporalWorkflowId: ctx.info.workflowExecution?.workflowId ?? '' },
        },
        ROOT_CONTEXT,
      );
      try {
        return await context.with(trace.setSpan(ROOT_CONTEXT, span), () => next({ ...input, headers }));
      } finally {
        span.end();
      }
    },
  },
});
