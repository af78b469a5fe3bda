import Type from 'typebox';
import { defineRoute } from './route.js';
import { BuilderInfoSchema, BuilderSchema, OrgParams } from '../schemas/orgs.js';
import { builderInfo, builderView, orgBuilders } from '../domain/builders.js';
import { findMemberOrg, requireBuilder } from '../domain/orgs.js';

/** Builders: the signed-in one, and the members of an org they belong to. */
export const builderRoutes = [
  defineRoute({
    method: 'GET',
    path: '/my-info',
    operationId: 'getMyInfo',
    summary: 'Who is signed in, and the projects they reach',
    tags: ['Orgs'],
    auth: ['bearer'],
    responses: {
      200: { description: 'The builder, their projects and their first org', schema: BuilderInfoSchema },
    },
  }).handle(async ({ em, principal }) => {
    const builder = requireBuilder(principal);
    return { status: 200, body: await builderInfo(em, builder.builderId) };
  }),
  defineRoute({
    method: 'GET',
    path: '/orgs/{orgId}/builders',
    operationId: 'listOrgBuilders',
    summary: 'List the members of an org, in the order they joined',
    tags: ['Orgs'],
    auth: ['bearer'],
    params: OrgParams,
    responses: { 200: { description: 'The org’s builders', schema: Type.Array(BuilderSchema) } },
  }).handle(async ({ em, principal, params }) => {
    const builder = requireBuilder(principal);
    const org = await findMemberOrg(em, params.orgId, builder.builderId);
    return { status: 200, body: (await orgBuilders(em, org.id)).map(builderView) };
  }),
];
