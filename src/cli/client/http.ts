import { parseArgs } from 'node:util';

/**
 * What the builder's daily commands share: where Ferry is (`--api-url`, `FERRY_API_URL`), which
 * project (`--project`, `FERRY_PROJECT`), and the key, from `FERRY_API_KEY` only (a key on the
 * command line would sit in the shell's history and in `ps`). They speak the public HTTP API.
 */
export const clientOptionSpec = {
  'api-url': { type: 'string' },
  'read-url': { type: 'string' },
  project: { type: 'string' },
  json: { type: 'boolean' },
} as const;

export const CLIENT_OPTIONS_HELP = [
  '  --api-url <url>   the api host (default $FERRY_API_URL, else http://localhost:8080)',
  '  --project <name>  the project, by name or id (default $FERRY_PROJECT, else development)',
  '  The API key is read from $FERRY_API_KEY.',
].join('\n');

type Spec = Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;

/** Options and positionals of a client command; an unknown option fails naming it. */
export function clientArgs<T extends Spec>(args: string[], spec: T) {
  return parseArgs({ args, options: { ...clientOptionSpec, ...spec }, allowPositionals: true, strict: true });
}

/** A failure the command reports as is: the problem's title, detail and each issue. */
export class CommandError extends Error {}

interface Problem {
  status?: number;
  title?: string;
  detail?: string;
  issues?: { name?: string; detail?: string; in?: string }[];
}

function problemText(status: number, body: unknown, what: string): string {
  const problem = (typeof body === 'object' && body !== null ? body : {}) as Problem;
  const lines = [
    `${what} failed: ${status} ${problem.title ?? ''}`.trim() + (problem.detail ? `: ${problem.detail}` : ''),
    ...(problem.issues ?? []).map((issue) => `  ${issue.name ?? issue.in ?? ''}: ${issue.detail ?? ''}`),
  ];
  if (!problem.title && typeof body === 'string' && body) lines.push(`  ${body.slice(0, 500)}`);
  return lines.join('\n');
}

export class FerryClient {
  readonly apiUrl: string;
  readonly project: string;
  readonly #key: string;
  readonly #readUrl?: string;

  constructor(values: { 'api-url'?: string; 'read-url'?: string; project?: string }) {
    const key = process.env.FERRY_API_KEY;
    if (!key) throw new CommandError('FERRY_API_KEY is not set: export FERRY_API_KEY=<a project API key>');
    this.#key = key;
    this.apiUrl = apiRoot(values['api-url'] ?? process.env.FERRY_API_URL ?? 'http://localhost:8080');
    this.#readUrl = values['read-url'] ?? process.env.FERRY_READ_URL;
    this.project = values.project ?? process.env.FERRY_PROJECT ?? 'development';
  }

  /** `/projects/{project}` + path, URL-encoded where it matters. */
  projectPath(path = ''): string {
    return `/projects/${encodeURIComponent(this.project)}${path}`;
  }

  async call<T>(
    method: string,
    path: string,
    options: { body?: unknown; host?: 'api' | 'read'; allow404?: boolean } = {},
  ): Promise<T | undefined> {
    const base = options.host === 'read' ? await this.readUrl() : this.apiUrl;
    const url = `${base}${path}`;
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: {
          'x-api-key': this.#key,
          accept: 'application/json',
          ...(options.body !== undefined && { 'content-type': 'application/json' }),
        },
        ...(options.body !== undefined && { body: JSON.stringify(options.body) }),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new CommandError(
        `cannot reach ${url}: ${cause?.code ?? cause?.message ?? (error as Error).message}`,
      );
    }
    const text = await response.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: reported as text below
    }
    if (response.status === 404 && options.allow404) return undefined;
    if (!response.ok) throw new CommandError(problemText(response.status, body, `${method} ${url}`));
    return body as T;
  }

  /** The read host: --read-url, $FERRY_READ_URL, else what the api host's console config names. */
  async readUrl(): Promise<string> {
    if (this.#readUrl) return apiRoot(this.#readUrl);
    const configUrl = `${new URL(this.apiUrl).origin}/console/config.json`;
    const answer = await fetch(configUrl).catch(() => undefined);
    const named = answer?.ok
      ? ((await answer.json()) as { hosts?: { read?: string } }).hosts?.read
      : undefined;
    if (!named)
      throw new CommandError(`cannot tell where the read host is from ${configUrl}: pass --read-url`);
    return apiRoot(new URL(named, configUrl).toString());
  }
}

/** `http://host:8080`, `http://host:8080/` or `http://host:8080/v1`: the `/v1` root. */
function apiRoot(url: string): string {
  const trimmed = url.replace(/\/+$/, '');
  try {
    new URL(trimmed);
  } catch {
    throw new CommandError(`not a URL: ${url}`);
  }
  return trimmed.endsWith('/v1') ? trimmed : `${trimmed}/v1`;
}

/** Rows as an aligned text table, with a header line. */
export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, column) =>
    Math.max(header.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : (cell ?? '').padEnd(widths[column])))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n') + '\n';
}
