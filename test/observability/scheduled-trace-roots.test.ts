import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ROOT_CONTEXT, context, trace, type Span } from '@opentelemetry/api';
import type { Context } from '@temporalio/activity';
import type { ActivityExecuteInput } from '@temporalio/worker';
import {
  headersWithContext,
  TRACE_HEADER,
} from '@temporalio/interceptors-opentelemetry/lib/instrumentation.js';
import { resetConfig } from '../../src/config.js';
import { scheduledWorkTraceRoots } from '../../src/cli/scheduled-trace-roots.js';
import { startTracing, stopTracing } from '../../src/tracing.js';

/**
 * A scheduled read is a trace of its own, linked to its installation's workflow, instead of one more
 * span of the months-old trace that created the installation.
 */

beforeAll(async () => {
  // Nothing listens there: spans are batched and dropped at shutdown, which is all this needs.
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = 'http://127.0.0.1:9';
  resetConfig();
  await startTracing('worker');
});

afterAll(async () => {
  await stopTracing();
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  resetConfig();
});

interface SeenSpan {
  parentSpanId?: string;
  name: string;
  links: { context: { traceId: string; spanId: string } }[];
}

/** Runs `activityType` through the interceptor with the workflow's span in its headers. */
async function execute(activityType: string) {
  const workflowSpan = trace.getTracer('test').startSpan('RunWorkflow:installationWorkflow');
  const headers = await context.with(trace.setSpan(ROOT_CONTEXT, workflowSpan), () => headersWithContext({}));
  workflowSpan.end();
  const ctx = {
    info: { activityType, workflowExecution: { workflowId: 'installation/1', runId: 'run' } },
  } as unknown as Context;
  let seen: { span?: SeenSpan; headers: ActivityExecuteInput['headers'] } | undefined;
  await scheduledWorkTraceRoots(ctx).inbound!.execute!({ args: [], headers }, async (input) => {
    seen = { span: trace.getActiveSpan() as (Span & SeenSpan) | undefined, headers: input.headers };
    return undefined;
  });
  return { workflow: workflowSpan.spanContext(), headers, seen: seen! };
}

describe('a scheduled read’s trace', () => {
  it('starts a trace of its own, linked to its installation workflow’s span', async () => {
    const { workflow, headers, seen } = await execute('readObjectInline');
    expect(headers[TRACE_HEADER]).toBeDefined();
    expect(seen.headers[TRACE_HEADER]).toBeUndefined();
    expect(seen.span).toMatchObject({ name: 'scheduled:readObjectInline' });
    expect((seen.span as unknown as Span).spanContext().traceId).not.toBe(workflow.traceId);
    expect(seen.span!.parentSpanId).toBeUndefined();
    expect(seen.span!.links.map((link) => link.context)).toEqual([
      expect.objectContaining({ traceId: workflow.traceId, spanId: workflow.spanId }),
    ]);
  });

  it('leaves every other activity in its workflow’s trace', async () => {
    const { headers, seen } = await execute('objectsNeedingBackfill');
    expect(seen.headers).toBe(headers);
    expect(seen.span).toBeUndefined();
  });
});
