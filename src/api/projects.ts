import Type from 'typebox';
import { ProblemError } from '../core/problem.js';
import { defineRoute } from './route.js';
import { ProjectPathParams } from '../schemas/common.js';
import { CreateProjectBody, ProjectSchema, UpdateProjectBody } from '../schemas/projects.js';
import { ProjectEntity } from '../db/entities/project.js';
import { OrgMembershipEntity } from '../db/entities/org.js';
import { assertProjectNameFree, createProject, projectView } from '../domain/projects.js';
import { applyUpdateMask } from '../domain/update-mask.js';

export const projectRoutes = [
  defineRoute({
    method: 'GET',
    path: '/projects',
    operationId: 'listProjects',
    summary: 'List the projects the caller can see',
    tags: ['Projects'],
    auth: ['apiKey', 'bearer'],
    responses: { 200: { description: 'Projects', schema: Type.Array(ProjectSchema) } },
  }).handle(async ({ em, principal }) => {
    if (principal.kind === 'builder') {
      const memberships = await em.find(OrgMembershipEntity, { builderId: principal.builderId });
      const projects = await em.find(
        ProjectEntity,
        { orgId: { $in: memberships.map((m) => m.orgId) } },
        { orderBy: { createTime: 'asc' } },
      );
      return { status: 200, body: projects.map(projectView) };
    }
    const projectId =
      principal.kind === 'apiKey' || principal.kind === 'projectJwt' ? principal.projectId : '';
    const projects = await em.find(ProjectEntity, { id: projectId });
    return { status: 200, body: projects.map(projectView) };
  }),
  defineRoute({
    method: 'POST',
    path: '/projects',
    operationId: 'createProject',
    summary: 'Create a project in an org the builder belongs to',
    tags: ['Projects'],
    auth: ['bearer'],
    body: CreateProjectBody,
    responses: { 201: { description: 'Created', schema: ProjectSchema } },
  }).handle(async ({ em, principal, body }) => {
    if (principal.kind !== 'builder')
      throw ProblemError.unauthorized('Creating projects needs a builder’s bearer token.');
    const member = await em.count(OrgMembershipEntity, {
      orgId: body.orgId,
      builderId: principal.builderId,
    });
    if (!member) throw ProblemError.notFound(`Org "${body.orgId}" was not found.`);
    const project = await em.transactional((tx) => createProject(tx, body));
    return { status: 201, body: projectView(project) };
  }),
  defineRoute({
    method: 'GET',
    path: '/projects/{projectIdOrName}',
    operationId: 'getProject',
    summary: 'Get a project',
    tags: ['Projects'],
    // The public React components read the project (its appName) with the browser's token.
    auth: ['apiKey', 'bearer', 'projectJwt'],
    params: ProjectPathParams,
    responses: { 200: { description: 'The project', schema: ProjectSchema } },
  }).handle(async ({ project }) => {
    return { status: 200, body: projectView(project) };
  }),
  defineRoute({
    method: 'PATCH',
    path: '/projects/{projectIdOrName}',
    operationId: 'updateProject',
    summary: 'Update a project',
    tags: ['Projects'],
    auth: ['apiKey', 'bearer'],
    params: ProjectPathParams,
    body: UpdateProjectBody,
    responses: { 200: { description: 'The updated project', schema: ProjectSchema } },
  }).handle(async ({ em, project, body }) => {
    if (body.updateMask.includes('name') && body.project.name && body.project.name !== project.name) {
      await assertProjectNameFree(em, body.project.name);
    }
    applyUpdateMask(project, body.project, body.updateMask, UpdateProjectBody.properties.project, 'project');
    await em.flush();
    return { status: 200, body: projectView(project) };
  }),
];
