/**
 * What a connector needs to authenticate one request, already decrypted. Produced by
 * `src/domain/credentials.ts` (which refreshes OAuth tokens ahead of expiry) and consumed by the
 * shared HTTP layer; never logged.
 */
export type AuthMaterial =
  | { type: 'oauth2'; accessToken: string }
  | { type: 'apiKey'; apiKey: string }
  | { type: 'basic'; username: string; password: string }
  /** Values of the provider's `customOpts.inputs`, filling its header and query templates. */
  | { type: 'custom'; values: Record<string, string> }
  | { type: 'none' };

/** How a connector reaches one customer's account at a provider. */
export interface ConnectionTarget {
  provider: string;
  connectionId?: string;
  /** Values for `{{.name}}` templates in the provider's URLs (workspace, sandboxURL, …). */
  templateVars: Record<string, string>;
  /** Returns current credentials; `forceRefresh` after a 401 asks for a freshly refreshed token. */
  auth(options?: { forceRefresh?: boolean }): Promise<AuthMaterial>;
  /**
   * The provider still answered 401 with fresh credentials: they are refused for good (revoked, a
   * wrong key), and the connection should say so until it is re-authorized.
   */
  rejected?(reason: string): Promise<void>;
}
