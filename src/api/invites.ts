import Type from 'typebox';
import { defineRoute } from './route.js';
import {
  AcceptInviteBody,
  BuilderInfoSchema,
  CreateInviteBody,
  InviteParams,
  InviteSchema,
  OrgParams,
} from '../schemas/orgs.js';
import { findMemberOrg, requireBuilder } from '../domain/orgs.js';
import { builderInfo } from '../domain/builders.js';
import {
  acceptInvite,
  createInvite,
  getInvite,
  inviteView,
  listInvites,
  revokeInvite,
} from '../domain/invites.js';

/** The spec: bearer authentication only. Only members of the org see or manage its invites. */
export const inviteRoutes = [
  defineRoute({
    method: 'POST',
    path: '/orgs/{orgId}/invites',
    operationId: 'createInvite',
    summary: 'Invite someone to the org by email',
    tags: ['Orgs'],
    auth: ['bearer'],
    params: OrgParams,
    body: CreateInviteBody,
    responses: { 201: { description: 'The new invite', schema: InviteSchema } },
  }).handle(async ({ em, principal, params, body, settings }) => {
    const builder = requireBuilder(principal);
    const invite = await em.transactional(async (tx) => {
      const org = await findMemberOrg(tx, params.orgId, builder.builderId);
      return createInvite(tx, org.id, body.email, builder.builderId, settings.inviteTtlSeconds);
    });
    return { status: 201, body: inviteView(invite) };
  }),
  defineRoute({
    method: 'GET',
    path: '/orgs/{orgId}/invites',
    operationId: 'listInvites',
    summary: 'List the org’s invites, newest first',
    tags: ['Orgs'],
    auth: ['bearer'],
    params: OrgParams,
    responses: { 200: { description: 'Invites', schema: Type.Array(InviteSchema) } },
  }).handle(async ({ em, principal, params }) => {
    const builder = requireBuilder(principal);
    const org = await findMemberOrg(em, params.orgId, builder.builderId);
    return { status: 200, body: (await listInvites(em, org.id)).map(inviteView) };
  }),
  defineRoute({
    method: 'GET',
    path: '/orgs/{orgId}/invites/{inviteId}',
    operationId: 'getInvite',
    summary: 'Get an invite',
    tags: ['Orgs'],
    auth: ['bearer'],
    params: InviteParams,
    responses: { 200: { description: 'The invite', schema: InviteSchema } },
  }).handle(async ({ em, principal, params }) => {
    const builder = requireBuilder(principal);
    const org = await findMemberOrg(em, params.orgId, builder.builderId);
    return { status: 200, body: inviteView(await getInvite(em, org.id, params.inviteId)) };
  }),
  defineRoute({
    method: 'DELETE',
    path: '/orgs/{orgId}/invites/{inviteId}',
    operationId: 'revokeInvite',
    summary: 'Revoke a pending invite',
    tags: ['Orgs'],
    auth: ['bearer'],
    params: InviteParams,
    responses: { 204: { description: 'Revoked' } },
  }).handle(async ({ em, principal, params }) => {
    const builder = requireBuilder(principal);
    await em.transactional(async (tx) => {
      const org = await findMemberOrg(tx, params.orgId, builder.builderId);
      await revokeInvite(tx, org.id, params.inviteId);
    });
    return { status: 204 };
  }),
  defineRoute({
    method: 'POST',
    path: '/invites:accept',
    operationId: 'acceptInvite',
    summary: 'Accept an invite sent to the signed-in builder’s address',
    description:
      'Joins the org of the invite. The bearer token’s email must be `invitedEmail`. Without `inviteId`, the newest invite to the address is accepted. Answers who the builder now is, as `GET /my-info` does, with the invite’s org as `orgRole`.',
    tags: ['Orgs'],
    auth: ['bearer'],
    body: AcceptInviteBody,
    responses: {
      200: { description: 'The builder, their projects and the org joined', schema: BuilderInfoSchema },
    },
  }).handle(async ({ em, principal, body }) => {
    const builder = requireBuilder(principal);
    const info = await em.transactional(async (tx) => {
      const invite = await acceptInvite(tx, builder, body);
      return builderInfo(tx, builder.builderId, invite.orgId);
    });
    return { status: 200, body: info };
  }),
];
