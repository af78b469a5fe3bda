/**
 * One error type for every failure the sandbox answers with. Each carries its finished response,
 * because the three surfaces speak different dialects: the REST API answers {error, message},
 * the token endpoint RFC 6749 {error, error_description}, and the browser-facing consent flow HTML.
 */
export class SandboxHttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly options: { headers?: Record<string, string>; html?: boolean } = {},
  ) {
    super(typeof body === 'string' ? body : JSON.stringify(body));
  }
}

export interface FieldProblem {
  name: string;
  message: string;
}

export function apiError(
  status: number,
  error: string,
  message: string,
  extra: Record<string, unknown> = {},
  headers?: Record<string, string>,
): SandboxHttpError {
  return new SandboxHttpError(status, { error, message, ...extra }, { headers });
}

export function validationError(message: string, fields?: FieldProblem[]): SandboxHttpError {
  return apiError(400, 'validation_error', message, fields?.length ? { fields } : {});
}

export function notFound(message: string): SandboxHttpError {
  return apiError(404, 'not_found', message);
}

export function oauthError(
  status: number,
  error: string,
  description: string,
  headers?: Record<string, string>,
): SandboxHttpError {
  return new SandboxHttpError(status, { error, error_description: description }, { headers });
}

/** A full HTML page; the caller renders it (see consent.ts). */
export function htmlError(status: number, html: string): SandboxHttpError {
  return new SandboxHttpError(status, html, { html: true });
}
