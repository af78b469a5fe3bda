import { options } from './options.js';
import { config } from '../config.js';
import { closeOrm, migrate, transaction } from '../db/orm.js';
import { findProject } from '../domain/project-access.js';
import { createApiKey, createOrg, createProject, apiKeyView } from '../domain/projects.js';
import { findOrCreateBuilder, issueBuilderToken } from '../domain/builder-tokens.js';
import { ProblemError } from '../core/problem.js';

function print(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

function required(value: string | boolean | undefined, flag: string): string {
  if (typeof value !== 'string' || !value) throw new Error(`--${flag} is required`);
  return value;
}

/** Outside production the admin commands bring the database up to date first, so they work on a fresh machine. */
async function run<T>(work: () => Promise<T>): Promise<T> {
  try {
    if (config().env !== 'production') await migrate();
    return await work();
  } catch (error) {
    if (error instanceof ProblemError) throw new Error(error.detail ?? error.title);
    throw error;
  } finally {
    await closeOrm();
  }
}

/** `projects create --name <name> [--org <orgId>]`: without an org, the project gets an org of its own. */
export async function createProjectCommand(args: string[]): Promise<void> {
  const values = options(args, {
    name: { type: 'string' },
    org: { type: 'string' },
    'app-name': { type: 'string' },
  });
  const name = required(values.name, 'name');
  const result = await run(() =>
    transaction(async (em) => {
      const orgId = typeof values.org === 'string' ? values.org : (await createOrg(em, `${name} org`)).id;
      const project = await createProject(em, {
        name,
        orgId,
        appName: values['app-name'] as string | undefined,
      });
      const { key } = createApiKey(em, project.id, { label: 'default' });
      return { id: project.id, name: project.name, orgId: project.orgId, apiKey: key };
    }),
  );
  print(result);
}

/** `api-keys create --project <idOrName> --label <label> [--frontend]` */
export async function createApiKeyCommand(args: string[]): Promise<void> {
  const values = options(args, {
    project: { type: 'string' },
    label: { type: 'string' },
    frontend: { type: 'boolean' },
  });
  const projectRef = required(values.project, 'project');
  const label = required(values.label, 'label');
  const scopes = values.frontend ? ['frontend'] : undefined;
  const result = await run(() =>
    transaction(async (em) => {
      const project = await findProject(em, projectRef);
      if (!project) throw new Error(`project ${projectRef} does not exist`);
      const { apiKey, key } = createApiKey(em, project.id, { label, scopes });
      await em.flush();
      return { ...apiKeyView(apiKey), key };
    }),
  );
  print(result);
}

/** `builders token --email <email>`: the token is the last line, for scripts. */
export async function builderTokenCommand(args: string[]): Promise<void> {
  const values = options(args, { email: { type: 'string' } });
  const email = required(values.email, 'email');
  if (!/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(email)) throw new Error(`"${email}" is not an email address`);
  const token = await run(() =>
    transaction(async (em) =>
      issueBuilderToken(await findOrCreateBuilder(em, email), config().builderTokenSecret),
    ),
  );
  process.stdout.write(`${token}\n`);
}
