import { randomBytes, timingSafeEqual } from 'node:crypto';

export const allScopes = [
  'contacts.read',
  'contacts.write',
  'companies.read',
  'companies.write',
  'deals.read',
  'deals.write',
  'webhooks',
] as const;

export const scopeDescriptions: Record<string, string> = {
  'contacts.read': 'Read your contacts',
  'contacts.write': 'Create, change and delete your contacts',
  'companies.read': 'Read your companies',
  'companies.write': 'Create, change and delete your companies',
  'deals.read': 'Read your deals',
  'deals.write': 'Create, change and delete your deals',
  webhooks: 'Receive notifications when your records change',
};

export const devClient = { clientId: 'sandbox-client', clientSecret: 'sandbox-secret' } as const;

const codeTtlMs = 10 * 60_000;
const refreshTokenTtlMs = 30 * 86_400_000;

export interface OAuthClient {
  clientId: string;
  clientSecret: string;
  name: string;
  /** Empty means any redirect URI is accepted (the dev client). */
  redirectUris: string[];
}

/** An authorization request waiting for the user's decision on the consent page. */
export interface PendingAuthorization {
  id: string;
  clientId: string;
  redirectUri: string;
  /** Whether redirect_uri was in the request; if so the token request must repeat it (RFC 6749 4.1.3). */
  redirectUriGiven: boolean;
  scope: string[];
  state?: string;
  codeChallenge?: string;
  codeChallengeMethod?: 'S256' | 'plain';
  expiresAt: number;
}

export interface AuthorizationCode extends Omit<PendingAuthorization, 'id' | 'state'> {
  code: string;
  used: boolean;
  /** Tokens issued from this code share it; a replayed code revokes them (RFC 6749 4.1.2). */
  grantId: string;
}

export interface IssuedToken {
  token: string;
  clientId: string;
  scope: string[];
  expiresAt: number;
  grantId: string;
}

export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  /** As GitHub and Intuit send it: how long the refresh token lasts. */
  refresh_token_expires_in?: number;
  scope: string;
}

function randomToken(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** Clients, pending consents, codes and tokens: all in memory, all opaque random strings. */
export class OAuthStore {
  private clients = new Map<string, OAuthClient>();
  private pending = new Map<string, PendingAuthorization>();
  private codes = new Map<string, AuthorizationCode>();
  private accessTokens = new Map<string, IssuedToken>();
  private refreshTokens = new Map<string, IssuedToken>();
  private writesSinceSweep = 0;

  constructor(private readonly accessTokenTtlSeconds: () => number) {
    this.registerClient({ ...devClient, name: 'Sandbox Dev App' });
  }

  registerClient(
    input: { name?: string; redirectUris?: string[]; clientId?: string; clientSecret?: string } = {},
  ): OAuthClient {
    const client: OAuthClient = {
      clientId: input.clientId ?? `client_${randomBytes(9).toString('base64url')}`,
      clientSecret: input.clientSecret ?? randomToken('secret_'),
      name: input.name ?? 'Sandbox App',
      redirectUris: input.redirectUris ?? [],
    };
    this.clients.set(client.clientId, client);
    return client;
  }

  client(clientId: string): OAuthClient | undefined {
    return this.clients.get(clientId);
  }

  authenticateClient(clientId: string, clientSecret: string): OAuthClient | undefined {
    const client = this.clients.get(clientId);
    return client && sameSecret(client.clientSecret, clientSecret) ? client : undefined;
  }

  startAuthorization(request: Omit<PendingAuthorization, 'id' | 'expiresAt'>): PendingAuthorization {
    const pending = { ...request, id: randomToken(''), expiresAt: Date.now() + codeTtlMs };
    this.pending.set(pending.id, pending);
    this.maybeSweep();
    return pending;
  }

  /** Single use: the consent form cannot be submitted twice. */
  takeAuthorization(id: string): PendingAuthorization | undefined {
    const pending = this.pending.get(id);
    this.pending.delete(id);
    return pending && pending.expiresAt > Date.now() ? pending : undefined;
  }

  issueCode(pending: PendingAuthorization): string {
    const { id: _id, state: _state, ...bound } = pending;
    const code = randomToken('');
    this.codes.set(code, {
      ...bound,
      code,
      used: false,
      grantId: randomToken(''),
      expiresAt: Date.now() + codeTtlMs,
    });
    return code;
  }

  /**
   * Returns the code if it is live; marks it used. A second use of a code revokes whatever the
   * first use issued, as RFC 6749 recommends, and fails.
   */
  redeemCode(code: string): AuthorizationCode | undefined {
    const entry = this.codes.get(code);
    if (!entry || entry.expiresAt <= Date.now()) return undefined;
    if (entry.used) {
      this.revokeGrant(entry.grantId);
      return undefined;
    }
    entry.used = true;
    return entry;
  }

  issueTokens(clientId: string, scope: string[], grantId: string, withRefreshToken: boolean): TokenResponse {
    const ttlSeconds = this.accessTokenTtlSeconds();
    const access: IssuedToken = {
      token: randomToken('sat_'),
      clientId,
      scope,
      grantId,
      expiresAt: Date.now() + ttlSeconds * 1000,
    };
    this.accessTokens.set(access.token, access);
    const response: TokenResponse = {
      access_token: access.token,
      token_type: 'Bearer',
      expires_in: ttlSeconds,
      scope: scope.join(' '),
    };
    if (withRefreshToken) {
      const refresh = { ...access, token: randomToken('srt_'), expiresAt: Date.now() + refreshTokenTtlMs };
      this.refreshTokens.set(refresh.token, refresh);
      response.refresh_token = refresh.token;
      response.refresh_token_expires_in = refreshTokenTtlMs / 1000;
    }
    this.maybeSweep();
    return response;
  }

  /** A live access token, or undefined when unknown, expired or revoked. */
  accessToken(token: string): IssuedToken | undefined {
    const entry = this.accessTokens.get(token);
    return entry && entry.expiresAt > Date.now() ? entry : undefined;
  }

  /** Rotation: the refresh token is consumed here, so presenting it again fails with invalid_grant. */
  takeRefreshToken(token: string): IssuedToken | undefined {
    const entry = this.refreshTokens.get(token);
    this.refreshTokens.delete(token);
    return entry && entry.expiresAt > Date.now() ? entry : undefined;
  }

  refreshToken(token: string): IssuedToken | undefined {
    return this.refreshTokens.get(token);
  }

  /** RFC 7009: revoking a refresh token also revokes the access tokens of its grant. */
  revoke(token: string, clientId: string): boolean {
    const access = this.accessTokens.get(token);
    if (access?.clientId === clientId) {
      this.accessTokens.delete(token);
      return true;
    }
    const refresh = this.refreshTokens.get(token);
    if (refresh?.clientId === clientId) {
      this.revokeGrant(refresh.grantId);
      return true;
    }
    return false;
  }

  revokeGrant(grantId: string): void {
    for (const map of [this.accessTokens, this.refreshTokens]) {
      for (const [token, entry] of map) if (entry.grantId === grantId) map.delete(token);
    }
  }

  revokeAll(): void {
    this.accessTokens.clear();
    this.refreshTokens.clear();
    this.codes.clear();
  }

  expireAccessTokens(): void {
    for (const entry of this.accessTokens.values()) {
      entry.expiresAt = Math.min(entry.expiresAt, Date.now() - 1);
    }
  }

  /** Drops expired entries now and then, so a long-running sandbox keeps flat memory. */
  private maybeSweep(): void {
    if (++this.writesSinceSweep < 500) return;
    this.writesSinceSweep = 0;
    const now = Date.now();
    for (const map of [this.pending, this.codes, this.accessTokens, this.refreshTokens] as Map<
      string,
      { expiresAt: number }
    >[]) {
      for (const [key, entry] of map) if (entry.expiresAt <= now) map.delete(key);
    }
  }
}
