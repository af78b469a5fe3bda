import { randomUUID } from 'node:crypto';
import type { FerryWorker } from '../../src/cli/worker.js';
import { config, resetConfig } from '../../src/config.js';
import { closeOrm, transaction } from '../../src/db/orm.js';
import { startServers, type RunningServers } from '../../src/api/server.js';
import { createApiKey, createOrg, createProject } from '../../src/domain/projects.js';
import { closeTemporalClient } from '../../src/temporal/client.js';

export interface TestProject {
  id: string;
  name: string;
  orgId: string;
  apiKey: string;
}

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/** A small fetch wrapper: JSON in, JSON (or text) out, never throws on HTTP errors. */
export async function request<T = any>(
  method: string,
  url: string,
  options: {
    body?: unknown;
    /** Sent as it is: text, or bytes (a body that is not UTF-8). */
    rawBody?: string | Uint8Array;
    headers?: Record<string, string>;
    apiKey?: string;
    bearer?: string;
  } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  if (options.bearer) headers.authorization = `Bearer ${options.bearer}`;
  let body: string | Uint8Array | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(url, { method, headers, body, redirect: 'manual' });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON; keep the text
  }
  return { status: response.status, body: parsed as T, headers: response.headers };
}

/** Projects made by this test process; its outbox relay handles only their events. */
const ownProjects = new Set<string>();

export async function createTestProject(name = `p-${randomUUID().slice(0, 8)}`): Promise<TestProject> {
  return transaction(async (em) => {
    const org = await createOrg(em, `${name} org`);
    const project = await createProject(em, { name, orgId: org.id });
    ownProjects.add(project.id);
    const { key } = createApiKey(em, project.id, { label: 'test' });
    return { id: project.id, name: project.name, orgId: org.id, apiKey: key };
  });
}

export interface TestStack {
  urls: RunningServers['urls'];
  project: TestProject;
  /** `api('GET', '/projects/x')` against the api host with the project's key. */
  api<T = any>(
    method: string,
    path: string,
    options?: Parameters<typeof request>[2],
  ): Promise<ApiResponse<T>>;
  read<T = any>(
    method: string,
    path: string,
    options?: Parameters<typeof request>[2],
  ): Promise<ApiResponse<T>>;
  write<T = any>(
    method: string,
    path: string,
    options?: Parameters<typeof request>[2],
  ): Promise<ApiResponse<T>>;
  search<T = any>(
    method: string,
    path: string,
    options?: Parameters<typeof request>[2],
  ): Promise<ApiResponse<T>>;
  taskQueue: string;
  close(): Promise<void>;
}

/**
 * The real stack for one test file: api/read/write listeners on free ports and, when asked, a
 * worker on a task queue of its own so parallel test files never steal each other's tasks.
 */
export async function startTestStack(options: { worker?: boolean } = {}): Promise<TestStack> {
  const taskQueue = `test-${randomUUID()}`;
  process.env.FERRY_TASK_QUEUE = taskQueue;
  resetConfig();
  const servers = await startServers({ api: 0, read: 0, write: 0, search: 0, proxy: 0, mcp: 0 }, '127.0.0.1');
  let worker: FerryWorker | undefined;
  let workerRun: Promise<void> | undefined;
  let relay: { stop(): Promise<void> } | undefined;
  if (options.worker) {
    const { createWorker } = await import('../../src/cli/worker.js');
    worker = await createWorker({ taskQueue, workflowBundlePath: process.env.FERRY_TEST_WORKFLOW_BUNDLE });
    workerRun = worker.run();
    const { startOutboxRelay } = await import('../../src/notifications/outbox-relay.js');
    relay = startOutboxRelay(config(), { taskQueue, onlyProjects: () => ownProjects });
  }
  const project = await createTestProject();
  const on =
    (base: string) =>
    <T>(method: string, path: string, requestOptions: Parameters<typeof request>[2] = {}) =>
      request<T>(method, `${base}${path}`, { apiKey: project.apiKey, ...requestOptions });
  return {
    urls: servers.urls,
    project,
    api: on(servers.urls.api),
    read: on(servers.urls.read),
    write: on(servers.urls.write),
    search: on(servers.urls.search),
    taskQueue,
    async close() {
      await relay?.stop();
      worker?.shutdown();
      await workerRun;
      await servers.close();
      await closeTemporalClient();
      await closeOrm();
    },
  };
}

/** Webhook destinations by name, for manifests that name them (a manifest may only name existing ones). */
export async function createDestinations(stack: TestStack, names: string[]): Promise<void> {
  for (const name of names) {
    const created = await stack.api('POST', `/projects/${stack.project.id}/destinations`, {
      body: { name, type: 'webhook', metadata: { url: `http://127.0.0.1:9/${name}` } },
    });
    if (created.status !== 201) throw new Error(`destination ${name}: ${JSON.stringify(created.body)}`);
  }
}
