import { createHmac, randomBytes, randomUUID } from 'node:crypto';

/**
 * Linear's webhooks as its reference describes them (https://linear.app/developers/webhooks; the
 * schema in github.com/linear/linear `packages/sdk/src/schema.graphql`; the SDK's verifier in
 * `packages/sdk/src/webhooks/client.ts`):
 *
 * - `webhookCreate(input: WebhookCreateInput!)`: `url` and `resourceTypes` (WebhookResourceType
 *   values: `Issue`, `Project`, `User`, …) required, and "either a specific team or all public teams"
 *   (`teamId` or `allPublicTeams`); `secret` optional ("Automatically generated if not provided");
 *   answers `WebhookPayload {success, lastSyncId, webhook}`. `webhookUpdate(id, input)` changes
 *   `url`, `resourceTypes`, `secret`, `label`, `enabled`; `webhookDelete(id)` answers
 *   `DeletePayload {entityId, lastSyncId, success}`; an unknown id is "Entity not found: Webhook".
 * - A delivery is a POST with `Linear-Signature` (hex HMAC-SHA256 of the raw body, keyed with the
 *   webhook's secret), `Linear-Delivery` (a UUID per delivery), `Linear-Event` (the entity type), and
 *   a body `{action, actor, createdAt, data, organizationId, type, updatedFrom, url, webhookId,
 *   webhookTimestamp}`: `action` is `create`, `update` or `remove` (an issue trashed or deleted),
 *   `updatedFrom` the previous values of what an update changed, `webhookTimestamp` the sending time
 *   in Unix milliseconds: the SDK refuses a delivery more than one minute from now.
 */

export const LINEAR_ORGANIZATION_ID = '8f2d6c1a-3b4e-4f5a-9c7d-1e2f3a4b5c6d';

const resourceTypes = [
  'AgentSessionEvent',
  'AppUserNotification',
  'Attachment',
  'Comment',
  'Customer',
  'CustomerNeed',
  'Cycle',
  'Document',
  'Initiative',
  'InitiativeUpdate',
  'Issue',
  'IssueLabel',
  'IssueSLA',
  'OAuthAuthorization',
  'PermissionChange',
  'Project',
  'ProjectLabel',
  'ProjectUpdate',
  'Reaction',
  'Release',
  'ReleaseNote',
  'User',
];
const createMembers = [
  'allPublicTeams',
  'enabled',
  'id',
  'label',
  'resourceTypes',
  'secret',
  'teamId',
  'url',
];
const updateMembers = ['enabled', 'label', 'resourceTypes', 'secret', 'url'];

export interface LinearWebhook {
  __typename: 'Webhook';
  id: string;
  url: string;
  label: string | null;
  enabled: boolean;
  secret: string;
  resourceTypes: string[];
  allPublicTeams: boolean;
  team: { __typename: 'Team'; id: string } | null;
  createdAt: string;
  updatedAt: string;
  archivedAt: null;
}

/** Webhooks the fake holds, by id. */
export const linearWebhooks = new Map<string, LinearWebhook>();

interface Errors {
  invalidInput(message: string): Error;
  graphqlError(message: string): Error;
  now(): number;
  nextSyncId(): number;
}

function checkMembers(type: string, members: string[], input: unknown, errors: Errors) {
  if (!input || typeof input !== 'object')
    throw errors.graphqlError(`Variable "$input" of required type "${type}!" was not provided.`);
  for (const name of Object.keys(input)) {
    if (!members.includes(name))
      throw errors.graphqlError(
        `Variable "$input" got invalid value ${JSON.stringify(input)}; Field "${name}" is not defined by type "${type}".`,
      );
  }
  const types = (input as { resourceTypes?: unknown }).resourceTypes;
  if (types !== undefined) {
    if (!Array.isArray(types) || !types.length)
      throw errors.invalidInput('resourceTypes must list at least one resource type');
    const unknown = types.find((value) => !resourceTypes.includes(String(value)));
    if (unknown !== undefined) throw errors.invalidInput(`Invalid resource type: ${String(unknown)}`);
  }
  return input as Record<string, unknown>;
}

/** The webhook mutations, for the fake's mutation root. */
export function linearWebhookMutations(errors: Errors) {
  const iso = () => new Date(errors.now()).toISOString();
  const found = (id: unknown) => {
    const webhook = linearWebhooks.get(String(id));
    if (!webhook) throw errors.invalidInput('Entity not found: Webhook');
    return webhook;
  };
  return {
    webhookCreate(args: Record<string, unknown>) {
      const input = checkMembers('WebhookCreateInput', createMembers, args.input, errors);
      for (const name of ['url', 'resourceTypes'])
        if (input[name] === undefined || input[name] === null)
          throw errors.graphqlError(
            `Variable "$input" got invalid value ${JSON.stringify(input)}; Field "${name}" of required type "${name === 'url' ? 'String!' : '[String!]!'}" was not provided.`,
          );
      if (!input.teamId && input.allPublicTeams !== true)
        throw errors.invalidInput('A webhook needs a team (teamId) or all public teams (allPublicTeams)');
      if (
        !/^https:\/\//.test(String(input.url)) &&
        !/^http:\/\/(127\.0\.0\.1|localhost)/.test(String(input.url))
      )
        throw errors.invalidInput('url must be an https URL');
      const webhook: LinearWebhook = {
        __typename: 'Webhook',
        id: typeof input.id === 'string' ? input.id : randomUUID(),
        url: String(input.url),
        label: typeof input.label === 'string' ? input.label : null,
        enabled: input.enabled !== false,
        secret:
          typeof input.secret === 'string' && input.secret
            ? input.secret
            : `lin_wh_${randomBytes(24).toString('hex')}`,
        resourceTypes: (input.resourceTypes as unknown[]).map(String),
        allPublicTeams: input.allPublicTeams === true,
        team: input.teamId ? { __typename: 'Team', id: String(input.teamId) } : null,
        createdAt: iso(),
        updatedAt: iso(),
        archivedAt: null,
      };
      linearWebhooks.set(webhook.id, webhook);
      return { __typename: 'WebhookPayload', success: true, lastSyncId: errors.nextSyncId(), webhook };
    },
    webhookUpdate(args: Record<string, unknown>) {
      const webhook = found(args.id);
      const input = checkMembers('WebhookUpdateInput', updateMembers, args.input, errors);
      for (const [name, value] of Object.entries(input)) {
        if (value === undefined || value === null) continue;
        (webhook as unknown as Record<string, unknown>)[name] =
          name === 'resourceTypes' ? (value as unknown[]).map(String) : value;
      }
      webhook.updatedAt = iso();
      return { __typename: 'WebhookPayload', success: true, lastSyncId: errors.nextSyncId(), webhook };
    },
    webhookDelete(args: Record<string, unknown>) {
      const webhook = found(args.id);
      linearWebhooks.delete(webhook.id);
      return {
        __typename: 'DeletePayload',
        entityId: webhook.id,
        lastSyncId: errors.nextSyncId(),
        success: true,
      };
    },
  };
}

export interface LinearChange {
  action: 'create' | 'update' | 'remove';
  /** The entity type: `Issue`, `Project`, `User`. */
  type: string;
  /** The entity as the fake stores it (GraphQL shape); sent flattened as Linear's webhook payloads are. */
  record: Record<string, unknown>;
  /** For updates: the previous values of what changed. */
  updatedFrom?: Record<string, unknown>;
}

/** The entity as a webhook payload carries it: no `__typename`, references also as `…Id`. */
function payloadOf(record: Record<string, unknown>): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(record)) {
    if (name === '__typename') continue;
    if (value && typeof value === 'object' && !Array.isArray(value) && 'id' in value) {
      const { __typename: _, ...rest } = value as Record<string, unknown>;
      data[name] = rest;
      data[`${name}Id`] = (value as { id: unknown }).id;
    } else data[name] = value;
  }
  return data;
}

/**
 * A delivery as Linear posts it to a webhook: headers and the raw body, signed with the webhook's
 * secret unless another is given; `timestamp` (ms) to send an old or future one.
 */
export function linearWebhookDelivery(
  webhookId: string,
  change: LinearChange,
  options: { secret?: string; timestamp?: number } = {},
): { headers: Record<string, string>; body: string } {
  const webhook = linearWebhooks.get(webhookId);
  const secret = options.secret ?? webhook?.secret;
  if (!secret) throw new Error(`no Linear webhook ${webhookId}`);
  const timestamp = options.timestamp ?? Date.now();
  const data = payloadOf(change.record);
  const body = JSON.stringify({
    action: change.action,
    actor: { id: '2e4c6a8b-1d3f-4a5b-8c7d-9e0f1a2b3c4d', name: 'Mia Krystof', type: 'user' },
    createdAt: new Date(timestamp).toISOString(),
    data,
    organizationId: LINEAR_ORGANIZATION_ID,
    type: change.type,
    ...(change.updatedFrom && { updatedFrom: change.updatedFrom }),
    url: typeof data.url === 'string' ? data.url : `https://linear.app/acme/${change.type.toLowerCase()}`,
    webhookId,
    webhookTimestamp: timestamp,
  });
  return {
    headers: {
      'content-type': 'application/json; charset=utf-8',
      'user-agent': 'Linear-Webhook',
      'linear-delivery': randomUUID(),
      'linear-event': change.type,
      'linear-signature': createHmac('sha256', secret).update(body).digest('hex'),
    },
    body,
  };
}
