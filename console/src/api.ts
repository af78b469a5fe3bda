/** The console's one door to Ferry: the public API, on the hosts `/console/config.json` names. */

export interface ProblemIssue {
  in: string;
  name: string;
  detail: string;
}

export interface Problem {
  status: number;
  title?: string;
  detail?: string;
  remedy?: string;
  issues?: ProblemIssue[];
}

export class ApiError extends Error {
  readonly problem: Problem;
  constructor(problem: Problem) {
    super(problem.detail ?? problem.title ?? `HTTP ${problem.status}`);
    this.problem = problem;
  }
}

export type Host = 'api' | 'read' | 'write' | 'search';

export interface ConsoleConfig {
  apiUrl: string;
  hosts: Record<Exclude<Host, 'api'>, string>;
  temporal: { uiUrl: string; namespace: string; installationUrl: string };
}

export interface Credentials {
  kind: 'apiKey' | 'bearer';
  value: string;
}

let consoleConfig: ConsoleConfig | undefined;
let credentials: Credentials | undefined;

export async function loadConfig(): Promise<ConsoleConfig> {
  if (consoleConfig) return consoleConfig;
  const response = await fetch('/console/config.json', { cache: 'no-store' });
  if (!response.ok) throw new Error(`config.json answered ${response.status}`);
  consoleConfig = (await response.json()) as ConsoleConfig;
  return consoleConfig;
}

export function getConfig(): ConsoleConfig {
  if (!consoleConfig) throw new Error('config not loaded');
  return consoleConfig;
}

const storageKey = 'ferry-console-credentials';

/** Kept for the browser tab only (sessionStorage): closing it signs out. */
export function storedCredentials(): Credentials | undefined {
  try {
    const raw = sessionStorage.getItem(storageKey);
    return raw ? (JSON.parse(raw) as Credentials) : undefined;
  } catch {
    return undefined;
  }
}

export function setCredentials(next: Credentials | undefined): void {
  credentials = next;
  if (next) sessionStorage.setItem(storageKey, JSON.stringify(next));
  else sessionStorage.removeItem(storageKey);
}

export interface CallOptions {
  host?: Host;
  body?: unknown;
  query?: Record<string, string | number | boolean | undefined>;
  /** Credentials to try instead of the signed-in ones (sign-in). */
  as?: Credentials;
}

export async function call<T = unknown>(method: string, path: string, options: CallOptions = {}): Promise<T> {
  const config = getConfig();
  const host = options.host ?? 'api';
  const base = host === 'api' ? config.apiUrl : config.hosts[host];
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(options.query ?? {})) {
    if (value !== undefined && value !== '') query.set(name, String(value));
  }
  const url = `${base}${path}${query.size ? `?${query}` : ''}`;
  const headers: Record<string, string> = { accept: 'application/json, application/problem+json' };
  const who = options.as ?? credentials;
  if (who?.kind === 'apiKey') headers['x-api-key'] = who.value;
  if (who?.kind === 'bearer') headers.authorization = `Bearer ${who.value}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(url, {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
  } catch (error) {
    throw new ApiError({ status: 0, title: 'Network error', detail: `${url}: ${(error as Error).message}` });
  }
  const text = await response.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = text;
  }
  if (!response.ok) {
    const problem =
      parsed && typeof parsed === 'object'
        ? (parsed as Problem)
        : { status: response.status, detail: String(parsed ?? response.statusText) };
    throw new ApiError({ ...problem, status: response.status });
  }
  return parsed as T;
}

/** `/projects/{project}` with the name escaped. */
export const projectPath = (project: string) => `/projects/${encodeURIComponent(project)}`;

// The shapes the console reads (a subset of the OpenAPI document's).

export interface Project {
  id: string;
  name: string;
  orgId: string;
}

export interface Revision {
  id: string;
  specVersion: string;
  createTime: string;
  content: Record<string, unknown> & { name: string; provider: string };
}

/** `GET /manifests/latest`: the manifest file as last deployed. */
export interface DeployedManifest {
  sourceYaml: string;
  createTime: string;
  matchesLive: boolean;
}

export interface Integration {
  id: string;
  name: string;
  provider: string;
  createTime: string;
  updateTime: string;
  latestRevision: Revision;
}

export interface ReadObjectConfig {
  objectName: string;
  schedule: string;
  destination?: string;
  disabled?: boolean;
  selectedFields?: Record<string, boolean>;
  selectedFieldsAuto?: 'all';
  selectedFieldMappings?: Record<string, string>;
  backfill?: { defaultPeriod?: { days?: number; fullHistory?: boolean } };
}

export interface WriteObjectConfig {
  objectName: string;
  selectedValueDefaults?: Record<string, { value: unknown; applyOnUpdate?: string }>;
  deletionSettings?: { enabled: boolean };
}

export interface SubscribeObjectConfig {
  objectName: string;
  destination?: string;
  createEvent?: { enabled?: string };
  updateEvent?: { enabled?: string };
  deleteEvent?: { enabled?: string };
}

/** `config.content` as the installation's current version holds it. */
export interface InstallationContent {
  read?: { objects?: Record<string, ReadObjectConfig> };
  write?: { objects?: Record<string, WriteObjectConfig> };
  subscribe?: { objects?: Record<string, SubscribeObjectConfig> };
  proxy?: { enabled: boolean };
}

export interface Connection {
  id: string;
  provider: string;
  status: string;
  authScheme: string;
  group: { groupRef: string; groupName: string };
  consumer: { consumerRef: string; consumerName: string };
  createTime: string;
  updateTime: string;
}

export interface Installation {
  id: string;
  integrationId: string;
  healthStatus: 'healthy' | 'unhealthy';
  /** Why it is unhealthy (a destination disabled or failing, a failed read). */
  healthReason?: string;
  lastOperationStatus?: 'success' | 'failure' | 'in_progress';
  group?: { groupRef: string; groupName: string };
  connection: Connection;
  createTime: string;
  config: {
    id: string;
    revisionId: string;
    createTime?: string;
    createdBy?: string;
    content: InstallationContent & Record<string, unknown>;
  };
}

export interface Operation {
  id: string;
  integrationId: string;
  installationId: string;
  actionType: string;
  status: 'success' | 'failure' | 'in_progress';
  result?: string;
  metadata: {
    objects?: string[];
    readType?: string;
    progress?: { recordsProcessed?: number; recordsEstimatedTotal?: number; objectName?: string };
    temporal?: { workflowId: string; url: string };
    error?: string;
    /** An AI agent's tool call (`mcp.tool`): the tool and its arguments, secrets redacted. */
    tool?: string;
    arguments?: Record<string, unknown>;
  } & Record<string, unknown>;
  createTime: string;
  updateTime: string;
}

export interface Page<T> {
  results: T[];
  pagination: { done: boolean; nextPageToken?: string };
}

export interface OperationLog {
  timestamp: string;
  severity: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  message: { msg: string; error?: string; details: Record<string, string> };
}

export interface Destination {
  id: string;
  name: string;
  /** webhook, rabbitmq, postgres, nats, slack, … */
  type: string;
  /** A webhook's `url` and `headers`; other types' own fields (`serverUrl`, `exchange`, `table`, …). */
  metadata: { url?: string; headers?: Record<string, string>; serverUrl?: string } & Record<string, unknown>;
  secrets?: { signingSecret: string };
  disabled: boolean;
  disableTime?: string;
  createTime: string;
}

/** The answer to `POST /destinations/{name}:test`. */
export interface DestinationTest {
  messageId: string;
  delivered: boolean;
  durationMs: number;
  status?: number;
  answer?: string;
  error?: string;
  retryable?: boolean;
}

export interface NotificationEvent {
  id: string;
  eventType: string;
  createTime: string;
  routedTime?: string;
  data?: unknown;
}

export interface Topic {
  id: string;
  name: string;
}

export interface EventTopicRoute {
  id: string;
  eventType: string;
  topicId: string;
}

export interface TopicDestinationRoute {
  id: string;
  topicId: string;
  destinationId: string;
}

export interface DeliveryAttempt {
  id: string;
  messageId: string;
  attempt: number;
  kind: 'record' | 'notification';
  operationId?: string;
  delivered: boolean;
  /** Sent (or being sent) with no answer recorded. */
  pending?: boolean;
  status?: number;
  durationMs: number;
  responseExcerpt?: string;
  error?: string;
  createTime: string;
}

export interface InstallationSchedule {
  ready: boolean;
  objects: {
    objectName: string;
    schedule: string;
    paused: boolean;
    pauseNote?: string;
    nextFireAt?: string;
    needsBackfill: boolean;
    queuedTriggers: number;
    running?: { operationId: string; readType: string; startedAt: string };
    lastRun?: { readType: string; startedAt: string; finishedAt: string; succeeded: boolean };
  }[];
  temporal: { workflowId: string; url: string };
}
