import Type, { type Static } from 'typebox';
import { DateTime, UpdateMask, Uuid } from './common.js';
import { ProjectSchema } from './projects.js';

export const OrgSchema = Type.Object({
  id: Uuid,
  name: Type.String(),
  label: Type.String({ description: 'The org’s name, under the field name the public API gives it.' }),
  defaultTeamId: Type.String({
    format: 'uuid',
    description:
      'The org’s one team: every member of the org. Ferry grants access by org membership, so this team is all there is.',
  }),
  createTime: DateTime,
  updateTime: DateTime,
});
export type OrgView = Static<typeof OrgSchema>;

const OrgName = Type.String({ minLength: 1, maxLength: 200 });

/** `label` as the public API names it, or `name`; the two are one field. */
export const UpdateOrgBody = Type.Object(
  {
    updateMask: UpdateMask,
    org: Type.Object(
      {
        label: Type.Optional(OrgName),
        name: Type.Optional({ ...OrgName, description: 'Another name for `label`.' }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);
export type UpdateOrgInput = Static<typeof UpdateOrgBody>;

/** A person who signs in with a Ferry builder token; Ferry is their identity provider. */
export const BuilderSchema = Type.Object({
  id: Uuid,
  idpProvider: Type.Literal('ferry', {
    description: 'Who vouches for the builder: Ferry, which issues builder tokens.',
  }),
  idpRef: Type.String({ description: 'The builder at that provider: their email address.' }),
  primaryEmail: Type.String(),
  fullName: Type.Optional(Type.String()),
  createTime: DateTime,
});
export type BuilderView = Static<typeof BuilderSchema>;

const Role = Type.String({
  description: '`owner` or `member` of the org (of the project’s org, for a project).',
});
const principal = {
  role: Role,
  principalType: Type.Literal('builder', { description: 'Roles are held by builders themselves.' }),
  principalId: Uuid,
};

/** Who is signed in, and what they may reach: the projects of their orgs. */
export const BuilderInfoSchema = Type.Object({
  builder: BuilderSchema,
  projectRoles: Type.Record(Type.String(), Type.Object({ ...principal, project: ProjectSchema }), {
    description: 'By project ID: the projects of the builder’s orgs, with their role in the project’s org.',
  }),
  orgRole: Type.Optional(
    Type.Object(
      { ...principal, org: OrgSchema },
      { description: 'The org the builder joined first (after accepting an invite: that invite’s org).' },
    ),
  ),
});
export type BuilderInfoView = Static<typeof BuilderInfoSchema>;

export const AddMembershipBody = Type.Object(
  { builderId: Type.String({ minLength: 1, description: 'The builder to add to the org.' }) },
  { additionalProperties: false },
);

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
