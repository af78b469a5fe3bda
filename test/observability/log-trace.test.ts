import { afterAll, describe, expect, it } from '@jest/globals';
import { resetConfig } from '../../src/config.js';
import { pino } from 'pino';
import { logger, traceFields } from '../../src/logger.js';
import { inClientSpan, inServerSpan, startTracing, stopTracing } from '../../src/tracing.js';

/**
 * Log lines name the trace they were written in, so an operator can go from a line to its trace and
 * back; with tracing off they carry nothing more.
 */

afterAll(async () => {
  await stopTracing();
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  resetConfig();
});

describe('log lines and traces', () => {
  it("are Ferry's logger's lines", () => {
    expect((logger as unknown as Record<symbol, unknown>)[pino.symbols.mixinSym]).toBe(traceFields);
  });

  it('carry no trace fields while tracing is off', async () => {
    expect(traceFields()).toEqual({});
    await inServerSpan({}, { 'http.request.method': 'GET' }, async () => {
      expect(traceFields()).toEqual({});
    });
  });

  it('carry the trace and span of the work that logs them once tracing is on', async () => {
    // Nothing listens there: spans are batched and dropped at shutdown, which is all this needs.
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = 'http://127.0.0.1:9';
    resetConfig();
    await startTracing('api');
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await inServerSpan({ traceparent }, { 'http.request.method': 'GET' }, async (server) => {
      const fields = traceFields();
      expect(fields).toEqual({
        trace_id: '0af7651916cd43dd8448eb211c80319c',
        span_id: server.spanContext().spanId,
        trace_flags: '01',
      });
      await inClientSpan(
        'provider call',
        () => ({}),
        async (client) => {
          expect(traceFields()).toEqual({ ...fields, span_id: client!.spanContext().spanId });
        },
      );
    });
    expect(traceFields()).toEqual({});
  });
});
