import Type from 'typebox';
import { defineRoute } from './route.js';
import { ProblemError } from '../core/problem.js';
import { AddMembershipBody, CreateOrgBody, OrgParams, OrgSchema, UpdateOrgBody } from '../schemas/orgs.js';
import { OrgMembershipEntity, OrgEntity } from '../db/entities/org.js';
import {
  addMembership,
  createOrgWithOwner,
  findMemberOrg,
  orgView,
  requireBuilder,
  updateOrg,
} from '../domain/orgs.js';

/** Orgs own projects; a builder sees only the orgs they belong to. */
export const orgRoutes = [
  defineRoute({
    method: 'POST',
    path: '/orgs',
    operationId: 'createOrg',
    summary: 'Create an org with the signed-in builder as its owner',
    tags: ['Orgs'],
    auth: ['bearer'],
    body: CreateOrgBody,
    responses: { 201: { description: 'Created', schema: OrgSchema } },
  }).handle(async ({ em, principal, body }) => {
    const builder = requireBuilder(principal);
    const name = body.name ?? body.label;
    if (name === undefined || (body.label !== undefined && body.label !== name)) {
      throw ProblemError.invalid([
        { in: 'body', name: 'name', detail: 'name (or label, the same) is required, and the two must agree' },
      ]);
    }
    const org = await em.transactional((tx) => createOrgWithOwner(tx, name, builder.builderId));
    return { status: 201, body: orgView(org) };
  }),
  defineRoute({
    method: 'GET',
    path: '/orgs',
    operationId: 'listOrgs',
    summary: 'List the orgs the signed-in builder belongs to',
    tags: ['Orgs'],
    auth: ['bearer'],
    responses: { 200: { description: 'Orgs', schema: Type.Array(OrgSchema) } },
  }).handle(async ({ em, principal }) => {
    const builder = requireBuilder(principal);
    const memberships = await em.find(OrgMembershipEntity, { builderId: builder.builderId });
    const orgs = await em.find(
      OrgEntity,
      { id: { $in: memberships.map((membership) => membership.orgId) } },
      { orderBy: { createTime: 'asc', id: 'asc' } },
    );
    return { status: 200, body: orgs.map(orgView) };
  }),
  defineRoute({
    method: 'GET',
    path: '/orgs/{orgId}',
    operationId: 'getOrg',
    summary: 'Get an org the signed-in builder belongs to',
    tags: ['Orgs'],
    auth: ['bearer'],
    params: OrgParams,
    responses: { 200: { description: 'The org', schema: OrgSchema } },
  }).handle(async ({ em, principal, params }) => {
    const builder = requireBuilder(principal);
    return { status: 200, body: orgView(await findMemberOrg(em, params.orgId, builder.builderId)) };
  }),
  defineRoute({
    method: 'PATCH',
    path: '/orgs/{orgId}',
    operationId: 'updateOrg',
    summary: 'Rename an org the signed-in builder belongs to',
    description: '`updateMask: ["label"]` with `org: {label}` (`name` is the same field).',
    tags: ['Orgs'],
    auth: ['bearer'],
    params: OrgParams,
    body: UpdateOrgBody,
    responses: { 200: { description: 'The org', schema: OrgSchema } },
  }).handle(async ({ em, principal, params, body }) => {
    const builder = requireBuilder(principal);
    const org = await em.transactional(async (tx) => {
      const found = await findMemberOrg(tx, params.orgId, builder.builderId);
      updateOrg(found, body);
      return found;
    });
    return { status: 200, body: orgView(org) };
  }),
  defineRoute({
    method: 'POST',
    path: '/orgs/{orgId}/memberships',
    operationId: 'addUserToOrg',
    summary: 'Add a builder to the org',
    description:
      'The builder (by ID, as `GET /my-info` shows it) becomes a member at once, without an invite. Any member may add one; adding a member again changes nothing.',
    tags: ['Orgs'],
    auth: ['bearer'],
    params: OrgParams,
    body: AddMembershipBody,
    responses: { 201: { description: 'The builder is a member' } },
  }).handle(async ({ em, principal, params, body }) => {
    const builder = requireBuilder(principal);
    await em.transactional(async (tx) =>
      addMembership(tx, await findMemberOrg(tx, params.orgId, builder.builderId), body.builderId),
    );
    return { status: 201 };
  }),
];
