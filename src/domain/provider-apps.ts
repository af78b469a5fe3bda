import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { isUuid } from '../core/ids.js';
import { ProblemError } from '../core/problem.js';
import { decryptSecret, encryptSecret } from '../crypto/secrets.js';
import { ConnectionEntity, ProviderAppEntity, type ProviderApp } from '../db/entities/connection.js';
import { authMethods, providerWithAuthMethod } from '../providers/catalog/auth-methods.js';
import { getProvider, type Provider } from '../providers/catalog/index.js';
import type { ProviderOAuth2Opts } from '../schemas/provider.js';
import type {
  CreateProviderAppInput,
  ProviderAppView,
  UpdateProviderAppInput,
} from '../schemas/provider-apps.js';
import { UpdateProviderAppBody } from '../schemas/provider-apps.js';
import { applyUpdateMask } from './update-mask.js';

/** A catalog provider that authenticates with OAuth 2.0, with its options. */
export type OAuth2Provider = Provider & { oauth2Opts: ProviderOAuth2Opts };

/**
 * The catalog entry of `name` as its OAuth 2.0 method sees it (the main method, or an OAuth
 * alternative), refused with a 400 naming `field` when it has none.
 */
export function requireOAuth2Provider(name: string, field = 'provider'): OAuth2Provider {
  const provider = getProvider(name);
  if (!provider) {
    throw ProblemError.invalid([
      { in: 'body', name: field, value: name, detail: `"${name}" is not a provider in Ferry’s catalog` },
    ]);
  }
  // The main method if it is OAuth, else an OAuth alternative (Front, Copper, monday.com: API tokens first).
  const oauth2 = authMethods(provider).find((method) => method.authType === 'oauth2' && method.oauth2Opts);
  if (!oauth2) {
    throw ProblemError.invalid([
      {
        in: 'body',
        name: field,
        value: name,
        detail: `"${name}" authenticates with ${provider.authType}${provider.alternativeAuth?.length ? ` or ${provider.alternativeAuth.map((alternative) => alternative.authType).join(', ')}` : ''}, not OAuth 2.0; provider apps and OAuth flows are for oauth2 providers`,
      },
    ]);
  }
  return providerWithAuthMethod(provider, oauth2) as OAuth2Provider;
}

/** A flat list is one group of scopes; empty strings and repeats are dropped. */
export function normaliseScopes(scopes: string[] | string[][] | undefined): string[][] {
  if (!scopes || scopes.length === 0) return [];
  const groups = (typeof scopes[0] === 'string' ? [scopes as string[]] : (scopes as string[][])).map(
    (group) => [...new Set(group.filter(Boolean))],
  );
  return groups.filter((group) => group.length > 0);
}

export function providerAppView(app: ProviderApp): ProviderAppView {
  return {
    id: app.id,
    projectId: app.projectId,
    provider: app.provider,
    ...(app.externalRef && { externalRef: app.externalRef }),
    clientId: app.clientId,
    // Stored as the groups they were given in; answered flat, as the public ProviderApp has them.
    scopes: [...new Set(app.scopes.flat())],
    metadata: app.metadata,
    createTime: app.createTime.toISOString(),
    updateTime: app.updateTime.toISOString(),
  };
}

export function providerAppSecret(app: ProviderApp): string {
  return decryptSecret(app.clientSecretEncrypted);
}

export async function createProviderApp(
  em: EntityManager,
  projectId: string,
  input: CreateProviderAppInput,
): Promise<ProviderApp> {
  requireOAuth2Provider(input.provider);
  const now = new Date();
  const app = em.create(ProviderAppEntity, {
    id: randomUUID(),
    projectId,
    provider: input.provider,
    externalRef: input.externalRef,
    clientId: input.clientId,
    clientSecretEncrypted: encryptSecret(input.clientSecret),
    scopes: normaliseScopes(input.scopes),
    metadata: input.metadata ?? {},
    createTime: now,
    updateTime: now,
  });
  em.persist(app);
  return app;
}

export async function findProviderApp(
  em: EntityManager,
  projectId: string,
  id: string,
): Promise<ProviderApp> {
  const app = isUuid(id) ? await em.findOne(ProviderAppEntity, { id, projectId }) : null;
  if (!app)
    throw ProblemError.notFound(
      `Provider app "${id}" was not found.`,
      'Check the provider app ID and the project ID.',
    );
  return app;
}

export function listProviderApps(em: EntityManager, projectId: string): Promise<ProviderApp[]> {
  return em.find(ProviderAppEntity, { projectId }, { orderBy: { createTime: 'asc', id: 'asc' } });
}

/** The project's default app for a provider: the first one created for it. */
export function defaultProviderApp(
  em: EntityManager,
  projectId: string,
  provider: string,
): Promise<ProviderApp | null> {
  return em.findOne(
    ProviderAppEntity,
    { projectId, provider },
    { orderBy: { createTime: 'asc', id: 'asc' } },
  );
}

export function updateProviderApp(app: ProviderApp, input: UpdateProviderAppInput): void {
  const draft: Partial<UpdateProviderAppInput['providerApp']> = {};
  applyUpdateMask(
    draft,
    input.providerApp,
    input.updateMask,
    UpdateProviderAppBody.properties.providerApp,
    'providerApp',
  );
  if (draft.clientId !== undefined) app.clientId = draft.clientId as string;
  if (draft.clientSecret !== undefined)
    app.clientSecretEncrypted = encryptSecret(draft.clientSecret as string);
  if (draft.externalRef !== undefined) app.externalRef = draft.externalRef as string;
  if (draft.scopes !== undefined) app.scopes = normaliseScopes(draft.scopes as string[] | string[][]);
  if (draft.metadata !== undefined) app.metadata = draft.metadata as Record<string, unknown>;
}

/** Refused while a connection refreshes its tokens with this app: deleting it would break them. */
export async function deleteProviderApp(em: EntityManager, app: ProviderApp): Promise<void> {
  const users = await em.count(ConnectionEntity, { providerAppId: app.id });
  if (users > 0) {
    const groups = await em.execute<{ group_ref: string }[]>(
      `select g.group_ref from connections c join groups g on g.id = c.group_id
        where c.provider_app_id = ? order by g.group_ref limit 5`,
      [app.id],
    );
    const named = groups.map((row) => `"${row.group_ref}"`).join(', ');
    throw ProblemError.conflict(
      `Provider app "${app.id}" is used by ${users} connection${users === 1 ? '' : 's'} (of group${groups.length === 1 ? '' : 's'} ${named}${users > groups.length ? ', …' : ''}); delete ${users === 1 ? 'it' : 'them'} first.`,
    );
  }
  em.remove(app);
}
