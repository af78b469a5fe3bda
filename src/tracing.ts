import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  propagation,
  trace,
  type Attributes,
  type Span,
} from '@opentelemetry/api';
import type { Resource } from '@opentelemetry/resources';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { config } from './config.js';

/**
 * Ferry's OpenTelemetry traces, off by default. With OTEL_EXPORTER_OTLP_ENDPOINT set, the first
 * process part that starts (the api listeners, the worker) starts the SDK: spans go in batches to
 * that collector over OTLP/HTTP (JSON). Off, the SDK is never even loaded, and the helpers below
 * call straight through: nothing is created, nothing is sent.
 *
 * One trace follows a request from the api's server span through Temporal (its OpenTelemetry
 * interceptors carry the context in workflow, activity and child-workflow headers) to the provider
 * calls and destination deliveries the activities make. Spans never carry secrets: no headers, no
 * query strings, no credentials, no record contents.
 */

export interface RunningTracing {
  /** The worker's workflow spans are exported through this (Temporal's workflow exporter sink). */
  spanProcessor: SpanProcessor;
  resource: Resource;
}

let started: Promise<RunningTracing | undefined> | undefined;
let running: { tracing: RunningTracing; shutdown(): Promise<void> } | undefined;

/** True once the SDK is started in this process; everything here is a pass-through until then. */
export function tracingOn(): boolean {
  return running !== undefined;
}

/**
 * Starts the SDK once per process when the configuration turns tracing on; later calls get the
 * same answer. `role` names the service (`ferry-api`, `ferry-worker`, `ferry` for `ferry start`)
 * unless OTEL_SERVICE_NAME does.
 */
export function startTracing(role: 'api' | 'worker' | 'all'): Promise<RunningTracing | undefined> {
  started ??= (async () => {
    const settings = config().tracing;
    if (!settings.enabled) return undefined;
    const [{ NodeTracerProvider }, { BatchSpanProcessor }, { OTLPTraceExporter }, { Resource }] =
      await Promise.all([
        import('@opentelemetry/sdk-trace-node'),
        import('@opentelemetry/sdk-trace-base'),
        import('@opentelemetry/exporter-trace-otlp-http'),
        import('@opentelemetry/resources'),
      ]);
    const resource = new Resource({
      'service.name': settings.serviceName ?? (role === 'all' ? 'ferry' : `ferry-${role}`),
      'service.namespace': 'ferry',
    });
    // Batches follow the standard OTEL_BSP_* variables; headers and timeout the OTEL_EXPORTER_OTLP_* ones.
    const spanProcessor = new BatchSpanProcessor(new OTLPTraceExporter({ url: settings.endpoint }));
    const provider = new NodeTracerProvider({ resource, spanProcessors: [spanProcessor] });
    // AsyncLocalStorage context, and W3C trace context propagation (`traceparent`).
    provider.register();
    running = { tracing: { spanProcessor, resource }, shutdown: () => provider.shutdown() };
    return running.tracing;
  })();
  return started;
}

/** Sends the spans still batched and stops the SDK (shutdown of a process); no-op when off. */
export async function stopTracing(): Promise<void> {
  const current = running;
  running = undefined;
  started = undefined;
  if (!current) return;
  trace.disable();
  context.disable();
  propagation.disable();
  await current.shutdown().catch(() => undefined);
}

const tracer = trace.getTracer('ferry');

/**
 * Runs `work` inside a client span (a provider call, a destination delivery): the span ends when
 * the work does, marked as an error when it throws. Off, `work` gets no span and runs as is: not
 * even `attributes` is called, and no promise is added.
 */
export function inClientSpan<T>(
  name: string,
  attributes: () => Attributes,
  work: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!running) return work(undefined);
  return tracer.startActiveSpan(name, { kind: SpanKind.CLIENT, attributes: attributes() }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      // The error's name only: messages can quote what a provider or receiver answered.
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.name ?? 'Error' });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Marks a span failed with a short reason that carries no secret (a status, a failure kind). */
export function failSpan(span: Span | undefined, reason: string): void {
  span?.setStatus({ code: SpanStatusCode.ERROR, message: reason });
}

/** The `traceparent` (and `tracestate`) headers of the current span, for a receiver that traces too. */
export function traceContextHeaders(): Record<string, string> {
  if (!running) return {};
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

/**
 * Runs `work` inside a server span continuing the caller's `traceparent`, if it sent one. The name
 * is settled once the work has found its route (`GET /v1/projects/:projectIdOrName/...`).
 */
export async function inServerSpan<T>(
  headers: Record<string, string | string[] | undefined>,
  attributes: Attributes,
  work: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = propagation.extract(ROOT_CONTEXT, headers);
  const span = tracer.startSpan(
    String(attributes['http.request.method'] ?? 'HTTP'),
    {
      kind: SpanKind.SERVER,
      attributes,
    },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), () => work(span));
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.name ?? 'Error' });
    throw error;
  } finally {
    span.end();
  }
}
