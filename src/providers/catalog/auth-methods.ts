import type { AlternativeAuth, AuthType, Provider } from '../../schemas/provider.js';

/** The part of a provider (or of a catalog file) that declares how it authenticates. */
export type AuthDeclaration = Pick<
  Provider,
  'authType' | 'oauth2Opts' | 'apiKeyOpts' | 'basicOpts' | 'customOpts' | 'jwtOpts' | 'alternativeAuth'
>;

/**
 * A provider's authentication methods: its main one (`authType` and the top-level `*Opts`) and the
 * alternatives it documents (`alternativeAuth`). Each method takes some kinds of credentials, named
 * as `connections:generate` names them; no two methods of one provider take the same kind, so the
 * kind a connection holds (its `authScheme`) says which method it uses.
 */

/** The credential kinds of `connections:generate`, one body field each. */
export const credentialKinds = [
  'apiKey',
  'basicAuth',
  'oauth2ClientCredentials',
  'oauth2AuthorizationCode',
  'oauth2Password',
  'jwt',
  'customAuth',
] as const;
export type CredentialKind = (typeof credentialKinds)[number];

/** One way to authenticate to a provider, with the options of its auth type. */
export interface AuthMethod extends Omit<AlternativeAuth, 'authType' | 'displayName'> {
  authType: AuthType;
  /** Absent for the main method, whose name is the auth type itself. */
  displayName?: string;
  /** True for the provider's main method (`authType`). */
  main: boolean;
}

const authFields = ['oauth2Opts', 'apiKeyOpts', 'basicOpts', 'customOpts', 'jwtOpts'] as const;

function mainMethod(provider: AuthDeclaration): AuthMethod {
  const method: AuthMethod = { authType: provider.authType, main: true };
  for (const field of authFields) {
    if (provider[field]) Object.assign(method, { [field]: provider[field] });
  }
  return method;
}

/** The provider's methods, its main one first. */
export function authMethods(provider: AuthDeclaration): AuthMethod[] {
  return [
    mainMethod(provider),
    ...(provider.alternativeAuth ?? []).map((alternative) => ({ ...alternative, main: false })),
  ];
}

const authorizationCodeGrants = ['authorizationCode', 'authorizationCodePKCE'];

/** Whether an OAuth method is for the browser flow (authorization code, with or without PKCE). */
export function isAuthorizationCodeMethod(method: AuthMethod): boolean {
  return method.authType === 'oauth2' && authorizationCodeGrants.includes(method.oauth2Opts?.grantType ?? '');
}

/** The kinds a method takes by its own declaration. */
function declaredKinds(method: AuthMethod): CredentialKind[] {
  switch (method.authType) {
    case 'apiKey':
      return ['apiKey'];
    case 'basic':
      return method.basicOpts?.apiKeyAsBasic ? ['apiKey', 'basicAuth'] : ['basicAuth'];
    case 'oauth2':
      if (method.oauth2Opts?.grantType === 'password') return ['oauth2Password'];
      return isAuthorizationCodeMethod(method) ? ['oauth2AuthorizationCode'] : ['oauth2ClientCredentials'];
    case 'jwt':
      return ['jwt'];
    case 'custom':
      return ['customAuth'];
    case 'none':
      return [];
  }
}

/**
 * The kinds each method takes. A main authorization-code method also takes client credentials at
 * the same token endpoint (many providers issue both there), unless an alternative declares its own
 * client-credentials method (a token endpoint of its own, as Microsoft's tenant endpoint).
 */
function kindsByMethod(provider: AuthDeclaration): { method: AuthMethod; kinds: CredentialKind[] }[] {
  const methods = authMethods(provider);
  const declared = methods.map((method) => ({ method, kinds: declaredKinds(method) }));
  const explicitClientCredentials = declared.some(
    ({ method, kinds }) => !method.main && kinds.includes('oauth2ClientCredentials'),
  );
  return declared.map(({ method, kinds }) => ({
    method,
    kinds:
      method.main && isAuthorizationCodeMethod(method) && !explicitClientCredentials
        ? [...kinds, 'oauth2ClientCredentials']
        : kinds,
  }));
}

/** Every credential kind the provider takes, in the order of its methods. */
export function acceptedCredentialKinds(provider: AuthDeclaration): CredentialKind[] {
  return [...new Set(kindsByMethod(provider).flatMap(({ kinds }) => kinds))];
}

/** The method that takes `kind`, if any. */
export function authMethodFor(provider: AuthDeclaration, kind: CredentialKind): AuthMethod | undefined {
  return kindsByMethod(provider).find(({ kinds }) => kinds.includes(kind))?.method;
}

/** Credential kinds that more than one of the provider's methods would take: a catalog error. */
export function ambiguousCredentialKinds(provider: AuthDeclaration): CredentialKind[] {
  const seen = new Map<CredentialKind, number>();
  for (const { kinds } of kindsByMethod(provider)) {
    for (const kind of kinds) seen.set(kind, (seen.get(kind) ?? 0) + 1);
  }
  return [...seen].filter(([, count]) => count > 1).map(([kind]) => kind);
}

/** How a method is named in messages: its display name and auth type. */
export function describeAuthMethod(method: AuthMethod): string {
  const grant = method.authType === 'oauth2' && method.oauth2Opts ? ` ${method.oauth2Opts.grantType}` : '';
  return method.displayName
    ? `${method.displayName} (${method.authType}${grant})`
    : `${method.authType}${grant}`;
}

/**
 * The provider as one of its methods sees it: that method's auth type and options in place of the
 * main ones (and no others), so code written for a provider's main method serves any of them.
 */
export function providerWithAuthMethod(provider: Provider, method: AuthMethod): Provider {
  if (method.main) return provider;
  const { oauth2Opts: _o, apiKeyOpts: _a, basicOpts: _b, customOpts: _c, jwtOpts: _j, ...rest } = provider;
  const effective: Provider = { ...rest, authType: method.authType };
  for (const field of authFields) {
    if (method[field]) Object.assign(effective, { [field]: method[field] });
  }
  return effective;
}

/** The `AuthMaterial` types a method presents: an access token for OAuth and JWT, and so on. */
function presents(method: AuthMethod, materialType: string): boolean {
  switch (method.authType) {
    case 'oauth2':
    case 'jwt':
      return materialType === 'oauth2';
    case 'basic':
      return materialType === 'basic' || (materialType === 'apiKey' && !!method.basicOpts?.apiKeyAsBasic);
    default:
      return materialType === method.authType;
  }
}

/**
 * The method that presents credentials of one material type: the main method when it can, else the
 * first alternative that can (an API key on an OAuth provider goes as its API-key alternative says);
 * the main method when none can, which then reports what it lacks.
 */
export function authMethodPresenting(provider: AuthDeclaration, materialType: string): AuthMethod {
  const methods = authMethods(provider);
  return methods.find((method) => presents(method, materialType)) ?? methods[0];
}
