import Type, { type Static } from 'typebox';
import { DateTime, Uuid } from './common.js';

export const OrgSchema = Type.Object({
  id: Uuid,
  name: Type.String(),
  label: Type.String({ description: 'The org’s name, under the field name the public API gives it.' }),
  createTime: DateTime,
  updateTime: DateTime,
});
export type OrgView = Static<typeof OrgSchema>;

const OrgName = Type.String({ minLength: 1, maxLength: 200 });

/** `name`, or `label` as clients of the public API send it; one is required. */
export const CreateOrgBody = Type.Object(
  {
    name: Type.Optional(OrgName),
    label: Type.Optional({ ...OrgName, description: 'Another name for `name`.' }),
  },
  { additionalProperties: false },
);

export const OrgParams = Type.Object({ orgId: Type.String({ minLength: 1, description: 'The org ID.' }) });

export const InviteStatusSchema = Type.Enum(['pending', 'accepted', 'revoked', 'expired']);

export const InviteSchema = Type.Object({
  id: Uuid,
  invitedEmail: Type.String(),
  parentType: Type.Literal('org'),
  parentId: Uuid,
  status: InviteStatusSchema,
  createTime: DateTime,
  updateTime: DateTime,
  expireTime: Type.String({ format: 'date-time', description: 'When a pending invite expires.' }),
});
export type InviteView = Static<typeof InviteSchema>;

/** RFC 5321's limits: 254 characters in all, 64 before the `@`. */
const Email = Type.String({
  format: 'email',
  maxLength: 254,
  pattern: '^[^@]{1,64}@',
  description: 'An email address (at most 254 characters, 64 before the @).',
});

export const CreateInviteBody = Type.Object({ email: Email }, { additionalProperties: false });

export const AcceptInviteBody = Type.Object(
  {
    invitedEmail: Email,
    inviteId: Type.Optional(
      Type.String({
        format: 'uuid',
        description: 'The invite to accept; without it, the newest invite to the address.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const InviteParams = Type.Object({
  orgId: Type.String({ minLength: 1 }),
  inviteId: Type.String({ minLength: 1, description: 'The invite ID.' }),
});
