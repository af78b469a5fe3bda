/** One validation issue, as the spec's Errors section describes. */
export interface ProblemIssue {
  type?: string;
  title?: string;
  detail: string;
  in: 'path' | 'query' | 'body' | 'header';
  name: string;
  value?: unknown;
}

export interface ProblemInit {
  status: number;
  title?: string;
  detail?: string;
  type?: string;
  issues?: ProblemIssue[];
  remedy?: string;
  retryable?: boolean;
  retryAfter?: number;
  context?: Record<string, unknown>;
  headers?: Record<string, string>;
}

const titles: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  501: 'Not Implemented',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
};

/**
 * The one error type every handler throws; `problemMiddleware` turns it into
 * `application/problem+json`. Anything else thrown becomes a 500 without internals.
 */
export class ProblemError extends Error {
  readonly status: number;
  readonly title: string;
  readonly type: string;
  readonly detail?: string;
  readonly issues?: ProblemIssue[];
  readonly remedy?: string;
  readonly retryable?: boolean;
  readonly retryAfter?: number;
  readonly context?: Record<string, unknown>;
  readonly headers?: Record<string, string>;

  constructor(init: ProblemInit) {
    super(init.detail ?? init.title ?? titles[init.status] ?? 'Error');
    this.status = init.status;
    this.title = init.title ?? titles[init.status] ?? 'Error';
    this.type = init.type ?? 'about:blank';
    this.detail = init.detail;
    this.issues = init.issues;
    this.remedy = init.remedy;
    this.retryable = init.retryable;
    this.retryAfter = init.retryAfter;
    this.context = init.context;
    this.headers = init.headers;
  }

  static badRequest(detail: string, issues?: ProblemIssue[]): ProblemError {
    return new ProblemError({ status: 400, detail, issues });
  }

  static invalid(issues: ProblemIssue[], detail = 'The request is not valid.'): ProblemError {
    return new ProblemError({ status: 400, detail, issues });
  }

  static unauthorized(detail: string): ProblemError {
    return new ProblemError({ status: 401, detail, headers: { 'WWW-Authenticate': 'Bearer, ApiKey' } });
  }

  static notFound(detail: string, remedy?: string): ProblemError {
    return new ProblemError({ status: 404, detail, remedy });
  }

  static conflict(detail: string): ProblemError {
    return new ProblemError({ status: 409, detail });
  }

  static unavailable(detail: string, retryAfter = 5): ProblemError {
    return new ProblemError({ status: 503, detail, retryable: true, retryAfter });
  }

  static badGateway(detail: string, retryable = true): ProblemError {
    return new ProblemError({ status: 502, detail, retryable });
  }
}
