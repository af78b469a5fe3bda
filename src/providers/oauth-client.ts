import { request } from 'undici';
import { providerDispatcher } from './http.js';

/**
 * Calls to a provider's OAuth 2.0 token endpoint (RFC 6749 section 4.1.3, 4.4 and 6): code
 * exchange, refresh and client credentials; and the JWT bearer grant (RFC 7523 section 2.1).
 * Errors never carry the client secret, an assertion or any token.
 */

export type ClientAuthMethod = 'clientSecretPost' | 'clientSecretBasic';

export interface OAuthClientCredentials {
  clientId: string;
  clientSecret: string;
}

export interface TokenEndpoint {
  tokenUrl: string;
  /** Absent for grants that authenticate otherwise (a signed JWT assertion). */
  client?: OAuthClientCredentials;
  /** How the client authenticates; `clientSecretPost` when the catalog does not say. */
  authMethod?: ClientAuthMethod;
}

const MAX_TOKEN_LIFETIME_SECONDS = 100 * 365 * 86_400;

export interface TokenResponse {
  accessToken: string;
  refreshToken?: string;
  tokenType?: string;
  /** Seconds until the access token expires, when the provider says. */
  expiresIn?: number;
  /** Seconds the refresh token lasts, where the provider says (`refresh_token_expires_in`, Intuit's `x_refresh_token_expires_in`). */
  refreshExpiresIn?: number;
  /** The granted scope string as sent (space- or comma-separated), when the provider says. */
  scope?: string;
  /** The whole response, for provider facts such as the workspace or user id (never logged). */
  raw: Record<string, unknown>;
}

/**
 * `rejected`: the provider refused the request (`invalid_grant`, `invalid_client`, ...), trying
 * again will not help. `unavailable`: the endpoint failed or could not be reached; it may later work.
 */
export class TokenEndpointError extends Error {
  constructor(
    message: string,
    readonly kind: 'rejected' | 'unavailable',
    readonly oauthError?: string,
    readonly httpStatus?: number,
  ) {
    super(message);
    this.name = 'TokenEndpointError';
  }
}

const timeoutMs = 15_000;
const maxDescriptionLength = 300;

function basicCredentials({ clientId, clientSecret }: OAuthClientCredentials): string {
  // RFC 6749 2.3.1: each part is form-urlencoded before joining.
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+');
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(clientSecret)}`).toString('base64')}`;
}

function parseBody(text: string, contentType: string): Record<string, unknown> | undefined {
  if (/json/i.test(contentType) || /^\s*\{/.test(text)) {
    try {
      const parsed: unknown = JSON.parse(text);
      return parsed && typeof parsed === 'object' && !Array.isArray(parsed)
        ? (parsed as Record<string, unknown>)
        : undefined;
    } catch {
      return undefined;
    }
  }
  // Some providers (GitHub without Accept) answer form-encoded.
  if (/x-www-form-urlencoded|text\/plain/i.test(contentType)) {
    return Object.fromEntries(new URLSearchParams(text));
  }
  return undefined;
}

function describeRejection(body: Record<string, unknown> | undefined, status: number): string {
  const code = typeof body?.error === 'string' ? body.error : undefined;
  const description =
    typeof body?.error_description === 'string' ? body.error_description.slice(0, maxDescriptionLength) : '';
  if (code) return `${code}${description ? `: ${description}` : ''}`;
  return `HTTP ${status}`;
}

/** POSTs a form to the token endpoint and returns the parsed token response. */
export async function requestToken(
  endpoint: TokenEndpoint,
  params: Record<string, string | undefined>,
): Promise<TokenResponse> {
  const form = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined) form.set(name, value);
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    accept: 'application/json',
  };
  if (!endpoint.client) {
    // The grant itself authenticates the caller (RFC 7523: the assertion is signed).
  } else if (endpoint.authMethod === 'clientSecretBasic') {
    headers.authorization = basicCredentials(endpoint.client);
  } else {
    form.set('client_id', endpoint.client.clientId);
    form.set('client_secret', endpoint.client.clientSecret);
  }
  let status: number;
  let text: string;
  let contentType: string;
  try {
    const response = await request(endpoint.tokenUrl, {
      dispatcher: providerDispatcher(),
      method: 'POST',
      headers,
      body: form.toString(),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    status = response.statusCode;
    contentType = String(response.headers['content-type'] ?? '');
    text = await response.body.text();
  } catch (error) {
    throw new TokenEndpointError(
      `The token endpoint could not be reached (${(error as Error).message}).`,
      'unavailable',
    );
  }
  const body = parseBody(text, contentType);
  if (status >= 200 && status < 300) {
    const accessToken = body?.access_token;
    if (typeof accessToken !== 'string' || accessToken === '') {
      throw new TokenEndpointError('The token endpoint answered without an access_token.', 'unavailable');
    }
    // A lifetime beyond a century is no expiry at all (and would overflow a Date).
    const seconds = (value: unknown) => {
      const number = Number(value);
      return Number.isFinite(number) && number > 0 && number <= MAX_TOKEN_LIFETIME_SECONDS
        ? number
        : undefined;
    };
    return {
      accessToken,
      refreshToken: typeof body!.refresh_token === 'string' ? body!.refresh_token : undefined,
      tokenType: typeof body!.token_type === 'string' ? body!.token_type : undefined,
      expiresIn: seconds(body!.expires_in),
      refreshExpiresIn: seconds(body!.refresh_token_expires_in ?? body!.x_refresh_token_expires_in),
      scope: typeof body!.scope === 'string' ? body!.scope : undefined,
      raw: body!,
    };
  }
  const oauthError = typeof body?.error === 'string' ? body.error : undefined;
  const transient =
    status >= 500 || status === 429 || status === 408 || oauthError === 'temporarily_unavailable';
  throw new TokenEndpointError(
    `The token endpoint ${transient ? 'failed' : 'refused the request'} (${describeRejection(body, status)}).`,
    transient ? 'unavailable' : 'rejected',
    oauthError,
    status,
  );
}

export function exchangeAuthorizationCode(
  endpoint: TokenEndpoint,
  input: { code: string; redirectUri: string; codeVerifier?: string },
): Promise<TokenResponse> {
  return requestToken(endpoint, {
    grant_type: 'authorization_code',
    code: input.code,
    redirect_uri: input.redirectUri,
    code_verifier: input.codeVerifier,
  });
}

export function refreshAccessToken(
  endpoint: TokenEndpoint,
  refreshToken: string,
  extraParams: Record<string, string> = {},
): Promise<TokenResponse> {
  return requestToken(endpoint, { ...extraParams, grant_type: 'refresh_token', refresh_token: refreshToken });
}

/** RFC 6749 section 4.3: the resource owner's username and password, for providers that still take them. */
export function passwordToken(
  endpoint: TokenEndpoint,
  input: { username: string; password: string; scope?: string },
  extraParams: Record<string, string> = {},
): Promise<TokenResponse> {
  return requestToken(endpoint, {
    ...extraParams,
    grant_type: 'password',
    username: input.username,
    password: input.password,
    scope: input.scope,
  });
}

export function clientCredentialsToken(
  endpoint: TokenEndpoint,
  scopes: string[] | undefined,
  scopeSeparator = ' ',
): Promise<TokenResponse> {
  return requestToken(endpoint, {
    grant_type: 'client_credentials',
    scope: scopes?.length ? scopes.join(scopeSeparator) : undefined,
  });
}

export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

/** RFC 7523 section 2.1: a signed assertion exchanged for an access token; `scope` only if given. */
export function jwtBearerToken(tokenUrl: string, assertion: string, scope?: string): Promise<TokenResponse> {
  return requestToken({ tokenUrl }, { grant_type: JWT_BEARER_GRANT, assertion, scope });
}

/** `a.b.c` in a token response (providers nest the workspace or user id). */
export function valueAtPath(raw: Record<string, unknown>, path: string): unknown {
  let current: unknown = raw;
  for (const part of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}

/** Scopes granted, from a scope string that may be space- or comma-separated. */
export function splitScopes(scope: string): string[] {
  return [...new Set(scope.split(/[\s,]+/).filter(Boolean))];
}
