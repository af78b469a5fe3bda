import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ConfigError, loadConfig } from '../../src/config.js';
import { closeOrm } from '../../src/db/orm.js';
import { generateSigningSecret } from '../../src/delivery/signing.js';
import { startSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { closeTemporalClient } from '../../src/temporal/client.js';
import { createTestProject, request, type TestProject } from '../support/stack.js';
import { WebhookReceiver } from '../support/webhook-receiver.js';
import {
  startApiProcess,
  startWorkerProcess,
  type ApiProcess,
  type WorkerProcess,
} from '../support/worker-process.js';

/**
 * Traces on the real stack, each part in a process of its own as in production: the api and the
 * worker export over OTLP/HTTP (JSON) to a collector in this test. One request that creates an
 * installation must give one trace that runs from the api's server span through Temporal (client,
 * workflow and activity spans, in the worker process) to the sandbox provider's calls and the
 * destination's deliveries. Off, nothing reaches the collector.
 */

const CONTACTS = 120;
const PAGE_SIZE = 50;
const PAGES = Math.ceil(CONTACTS / PAGE_SIZE);
const SANDBOX_KEY = 'sandbox-demo-key';

interface ExportedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

/** A tiny OTLP/HTTP collector: decodes the JSON export requests it receives into spans. */
class Collector {
  readonly spans: ExportedSpan[] = [];
  requests = 0;
  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<Collector> {
    const made: { collector?: Collector } = {};
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        made.collector!.receive(
          req.url ?? '',
          req.headers['content-type'],
          Buffer.concat(chunks).toString('utf8'),
        );
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    made.collector = new Collector(server, `http://127.0.0.1:${port}`);
    return made.collector;
  }

  private receive(path: string, type: string | undefined, body: string): void {
    this.requests++;
    if (path !== '/v1/traces' || !type?.startsWith('application/json')) {
      throw new Error(`the collector got ${path} as ${type}; expected JSON on /v1/traces`);
    }
    const decoded = JSON.parse(body) as {
      resourceSpans: {
        resource: { attributes: OtlpAttribute[] };
        scopeSpans: {
          spans: {
            traceId: string;
            spanId: string;
            parentSpanId?: string;
            name: string;
            kind: number;
            attributes?: OtlpAttribute[];
          }[];
        }[];
      }[];
    };
    for (const resourceSpans of decoded.resourceSpans) {
      const service = String(attributesOf(resourceSpans.resource.attributes)['service.name']);
      for (const scope of resourceSpans.scopeSpans) {
        for (const span of scope.spans) {
          this.spans.push({
            service,
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? '',
            name: span.name,
            kind: span.kind,
            attributes: attributesOf(span.attributes ?? []),
          });
        }
      }
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

interface OtlpAttribute {
  key: string;
  value: { stringValue?: string; intValue?: number | string; boolValue?: boolean; doubleValue?: number };
}

function attributesOf(list: OtlpAttribute[]): Record<string, unknown> {
  return Object.fromEntries(
    list.map(({ key, value }) => [
      key,
      value.stringValue ??
        (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue)),
    ]),
  );
}

async function eventually<T>(what: string, probe: () => T | undefined, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function expectCreated(response: { status: number; body: unknown }, what: string): void {
  if (response.status !== 201)
    throw new Error(`${what}: ${response.status} ${JSON.stringify(response.body)}`);
}

let sandbox: Sandbox;
let collector: Collector;
let project: TestProject;
const processes: (WorkerProcess | ApiProcess)[] = [];

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, contacts: CONTACTS, companies: 2, deals: 2 });
  collector = await Collector.start();
  project = await createTestProject();
});

afterAll(async () => {
  await Promise.all(processes.map((started) => started.kill('SIGKILL')));
  await collector?.close();
  await sandbox?.close();
  await closeTemporalClient();
  await closeOrm();
});

interface Run {
  urls: Awaited<ApiProcess['urls']>;
  installationId: string;
  receiver: WebhookReceiver;
  signingSecret: string;
}

/**
 * An api and a worker process with `env`, and an installation created through that api whose
 * backfill reads every contact from the sandbox and delivers it to a webhook receiver.
 */
async function installAndBackfill(env: Record<string, string>): Promise<Run> {
  const common = {
    FERRY_TASK_QUEUE: `traces-${randomUUID()}`,
    FERRY_SANDBOX_URL: sandbox.url,
    OTEL_BSP_SCHEDULE_DELAY: '200',
    // One provider call per delivered page, so the trace shows several of each.
    FERRY_READ_PROVIDER_PAGE_SIZE: String(PAGE_SIZE),
    ...env,
  };
  const api = startApiProcess(common);
  const worker = startWorkerProcess(common);
  processes.push(api, worker);
  await Promise.all([api.ready, worker.ready]);
  const urls = await api.urls;
  const call = (method: string, path: string, body: unknown) =>
    request(method, `${urls.api}/projects/${project.id}${path}`, { apiKey: project.apiKey, body });

  const signingSecret = generateSigningSecret();
  const receiver = await WebhookReceiver.start([signingSecret]);
  const destination = `hook-${randomUUID().slice(0, 8)}`;
  expect(
    (
      await call('POST', '/destinations', {
        name: destination,
        type: 'webhook',
        metadata: { url: receiver.url() },
        secrets: { signingSecret },
      })
    ).status,
  ).toBe(201);
  const name = `traced-${randomUUID().slice(0, 8)}`;
  const contacts = { objectName: 'contacts', destination, schedule: '0 0 1 1 *' };
  const integration = await call('POST', '/integrations', {
    name,
    provider: 'sandboxApiKey',
    latestRevision: {
      specVersion: '1.0.0',
      content: {
        name,
        provider: 'sandboxApiKey',
        read: {
          objects: [
            {
              ...contacts,
              requiredFields: [{ fieldName: 'email' }],
              backfill: { defaultPeriod: { fullHistory: true } },
              delivery: { pageSize: PAGE_SIZE },
            },
          ],
        },
        proxy: { enabled: true },
      },
    },
  });
  expectCreated(integration, 'integration');
  const groupRef = `group-${randomUUID().slice(0, 8)}`;
  const connection = await call('POST', '/connections:generate', {
    provider: 'sandboxApiKey',
    groupRef,
    consumerRef: 'jane',
    apiKey: SANDBOX_KEY,
  });
  expectCreated(connection, 'connection');
  const installation = await call('POST', `/integrations/${integration.body.id}/installations`, {
    groupRef,
    config: {
      content: {
        provider: 'sandboxApiKey',
        read: { objects: { contacts: { ...contacts, selectedFields: {} } } },
        proxy: { enabled: true },
      },
    },
  });
  expectCreated(installation, 'installation');
  await receiver.waitFor(
    () => new Set(receiver.acceptedRecordIds()).size === CONTACTS,
    90_000,
    'the backfill to deliver every contact',
  );
  return { urls, installationId: installation.body.id, receiver, signingSecret };
}

describe('tracing off (the default)', () => {
  it('exports nothing and sends no traceparent, though a collector is named', async () => {
    // OTEL_SDK_DISABLED wins over the endpoint: without it the endpoint alone would turn tracing on.
    const run = await installAndBackfill({
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_SDK_DISABLED: 'true',
    });
    try {
      // Longer than a batch's delay: anything exported would have arrived by now.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(collector.requests).toBe(0);
      expect(run.receiver.requests.length).toBeGreaterThan(0);
      for (const received of run.receiver.requests) expect(received.headers.traceparent).toBeUndefined();
    } finally {
      await run.receiver.stop();
    }
  }, 180_000);

  it('is off unless an OTLP endpoint is set, and refuses an endpoint that is not a URL', () => {
    const load = (vars: Record<string, string | undefined>) => {
      const env: NodeJS.ProcessEnv = { ...process.env, ...vars };
      for (const key of Object.keys(env)) if (env[key] === undefined) delete env[key];
      return loadConfig(env).tracing;
    };
    const none = {
      OTEL_EXPORTER_OTLP_ENDPOINT: undefined,
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: undefined,
      OTEL_SDK_DISABLED: undefined,
    };
    expect(load(none).enabled).toBe(false);
    expect(load({ ...none, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' })).toEqual({
      enabled: true,
      endpoint: 'http://collector:4318/v1/traces',
    });
    expect(
      load({ ...none, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://otel.example.com/in' }).endpoint,
    ).toBe('https://otel.example.com/in');
    expect(
      load({ ...none, OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318', OTEL_SDK_DISABLED: 'true' })
        .enabled,
    ).toBe(false);
    expect(() => load({ ...none, OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(ConfigError);
  });
});

describe('tracing on (OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  let run: Run;
  let trace: ExportedSpan[];
  let root: ExportedSpan;

  beforeAll(async () => {
    run = await installAndBackfill({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url });
    const route = '/v1/projects/:projectIdOrName/integrations/:integrationId/installations';
    root = await eventually('the server span of the installation’s creation', () =>
      collector.spans.find((span) => span.name === `POST ${route}`),
    );
    // The worker's spans arrive in batches of their own: wait for the last delivery's.
    trace = await eventually('the deliveries’ spans in the same trace', () => {
      const spans = collector.spans.filter((span) => span.traceId === root.traceId);
      const deliveries = spans.filter((span) => span.name === 'POST destination');
      // The read's workflow span ends (and is exported) after its last delivery.
      const read = spans.some((span) => span.name === 'RunWorkflow:readObjectWorkflow');
      return deliveries.length >= PAGES && read ? spans : undefined;
    }).catch((error: Error) => {
      const names = collector.spans
        .filter((span) => span.traceId === root.traceId)
        .map((span) => `${span.service} ${span.name} ${span.spanId} <- ${span.parentSpanId}`);
      throw new Error(`${error.message}; the trace has:\n${names.join('\n')}`);
    });
  }, 240_000);

  afterAll(async () => {
    await run?.receiver.stop();
  });

  it('opens each request with a server span named by its route template, with its status', () => {
    expect(root).toMatchObject({
      service: 'ferry-api',
      kind: 2, // SERVER
      parentSpanId: '',
      attributes: {
        'http.request.method': 'POST',
        'http.route': '/v1/projects/:projectIdOrName/integrations/:integrationId/installations',
        'http.response.status_code': 201,
        'ferry.listener': 'api',
      },
    });
  });

  it('follows the request through Temporal to the provider calls and the deliveries in one trace', () => {
    const byId = new Map(trace.map((span) => [span.spanId, span]));
    const named = (prefix: string) => trace.filter((span) => span.name.startsWith(prefix));
    const describeTrace = () => trace.map((span) => `${span.service} ${span.name}`).join('\n');

    // The api's client interceptor starts the installation workflow under the request's span.
    const start = named('StartWorkflow:installationWorkflow');
    expect(start).toHaveLength(1);
    expect(start[0]).toMatchObject({ service: 'ferry-api', parentSpanId: root.spanId });

    // In the worker: the read's workflow, its activities, each page's provider call and delivery.
    expect(named('RunWorkflow:readObjectWorkflow').length).toBeGreaterThanOrEqual(1);
    const activities = named('RunActivity:');
    expect(activities.length).toBeGreaterThanOrEqual(1);
    for (const span of activities) expect(span.service).toBe('ferry-worker');

    const providerCalls = trace.filter((span) => span.attributes['ferry.provider'] === 'sandboxApiKey');
    expect(providerCalls.length).toBeGreaterThanOrEqual(PAGES);
    for (const call of providerCalls) {
      expect(call).toMatchObject({
        service: 'ferry-worker',
        kind: 3, // CLIENT
        attributes: { 'http.request.method': 'GET', 'http.response.status_code': 200 },
      });
      expect(byId.get(call.parentSpanId)?.name).toMatch(/^RunActivity:/);
    }
    const deliveries = named('POST destination');
    for (const delivery of deliveries) {
      expect(delivery).toMatchObject({
        service: 'ferry-worker',
        kind: 3,
        attributes: { 'http.response.status_code': 200, 'server.address': '127.0.0.1' },
      });
      expect(byId.get(delivery.parentSpanId)?.name).toMatch(/^RunActivity:/);
    }
    // From each delivery up to the installation workflow's run, through the read's child workflow.
    // (The installation's own RunWorkflow span lasts as long as the installation: not exported yet.)
    const ancestry = (span: ExportedSpan): string[] => {
      const names: string[] = [];
      for (let parent = byId.get(span.parentSpanId); parent; parent = byId.get(parent.parentSpanId)) {
        names.push(parent.name);
      }
      return names;
    };
    for (const delivery of deliveries) {
      expect(ancestry(delivery)).toEqual([
        'RunActivity:readPages',
        'StartActivity:readPages',
        'RunWorkflow:readObjectWorkflow',
        'StartChildWorkflow:readObjectWorkflow',
      ]);
    }
    const child = named('StartChildWorkflow:readObjectWorkflow')[0];
    const installationRun = named('StartActivity:objectsNeedingBackfill')[0]?.parentSpanId;
    expect(child.parentSpanId).toBe(installationRun);
    // Every activity hangs off a workflow span of this trace, not off a trace of its own.
    for (const activity of activities) {
      expect(byId.get(activity.parentSpanId)?.name ?? describeTrace()).toMatch(/^StartActivity:/);
    }
  });

  it('hands the delivery’s trace context to the destination', () => {
    const accepted = run.receiver.accepted();
    expect(accepted.length).toBeGreaterThan(0);
    for (const received of accepted) {
      expect(String(received.headers.traceparent)).toMatch(
        new RegExp(`^00-${root.traceId}-[0-9a-f]{16}-01$`),
      );
    }
  });

  it('opens a proxied request with a server span of its own, the provider call under it', async () => {
    const response = await fetch(`${run.urls.proxy}/contacts?limit=2`, {
      headers: {
        'x-amp-proxy-version': '1',
        'x-amp-project-id': project.id,
        'x-api-key': project.apiKey,
        'x-amp-installation-id': run.installationId,
      },
    });
    expect(response.status).toBe(200);
    await response.text();
    const server = await eventually('the proxy’s server span', () =>
      collector.spans.find((span) => span.name === 'GET proxy'),
    );
    expect(server).toMatchObject({
      service: 'ferry-api',
      kind: 2,
      attributes: { 'ferry.listener': 'proxy', 'http.response.status_code': 200 },
    });
    const call = await eventually('the proxied provider call', () =>
      collector.spans.find((span) => span.parentSpanId === server.spanId),
    );
    expect(call).toMatchObject({
      traceId: server.traceId,
      name: 'GET sandboxApiKey',
      attributes: { 'url.path': '/api/v1/contacts' },
    });
  });

  it('keeps secrets, headers and query strings out of every span', () => {
    const text = JSON.stringify(collector.spans);
    for (const secret of [SANDBOX_KEY, project.apiKey, run.signingSecret]) expect(text).not.toContain(secret);
    expect(text).not.toContain(run.receiver.url());
    for (const span of collector.spans) {
      for (const [key, value] of Object.entries(span.attributes)) {
        expect(key).not.toMatch(/header|query|url\.full/i);
        if (typeof value === 'string') expect(value).not.toContain('?');
      }
    }
  });
});
