import { config } from '../../config.js';
import { readFile } from 'node:fs/promises';
import { stringify } from 'yaml';
import { ProblemError } from '../../core/problem.js';
import { checkManifest } from '../../domain/manifest.js';
import type { IntegrationView } from '../../schemas/integrations.js';
import { CLIENT_OPTIONS_HELP, CommandError, FerryClient, clientArgs } from './http.js';
import { lineDiff } from '../../core/line-diff.js';

export const deployHelp = [
  'Deploys a manifest (amp.yaml): prints, per integration, how it differs from the live revision,',
  'then applies the whole manifest at once (PUT …/integrations:batch). Nothing changes on an error.',
  '',
  '  --dry-run         check the manifest and print the differences; deploy nothing',
  '  --json            print the deployed integrations as JSON',
  CLIENT_OPTIONS_HELP,
  '',
  'Example:',
  '  FERRY_API_KEY=... ferry deploy examples/read.yaml --dry-run --api-url http://localhost:8080',
].join('\n');

/** Keys sorted at every level: the stored revision keeps no key order, so both sides are compared sorted. */
function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, sorted((value as Record<string, unknown>)[key])]),
    );
  return value;
}

const yamlOf = (value: unknown) => stringify(sorted(value), { lineWidth: 0 }).trimEnd();

export async function deployCommand(args: string[]): Promise<void> {
  const { values, positionals } = clientArgs(args, { 'dry-run': { type: 'boolean' } });
  const [file, ...extra] = positionals;
  if (!file) throw new CommandError('which manifest? ferry deploy <manifest.yaml>');
  if (extra.length) throw new CommandError(`unexpected argument "${extra[0]}"`);
  const sourceYaml = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    throw new CommandError(`cannot read ${file}: ${error.code ?? error.message}`);
  });
  let manifest;
  try {
    // The server checks it again, with what only it knows (destinations, the provider catalog).
    const checked = checkManifest(sourceYaml, config());
    manifest = checked.manifest;
    for (const warning of checked.warnings) process.stderr.write(`${file}: warning: ${warning.detail}\n`);
  } catch (error) {
    if (!(error instanceof ProblemError)) throw error;
    const issues = error.issues ?? [];
    throw new CommandError(
      [`${file}: ${error.detail ?? error.title}`, ...issues.map((issue) => `  ${issue.detail}`)].join('\n'),
    );
  }
  const client = new FerryClient(values);
  const out: string[] = [];
  for (const integration of manifest.integrations) {
    const live = await client.call<IntegrationView>(
      'GET',
      client.projectPath(`/integrations/${encodeURIComponent(integration.name)}`),
      { allow404: true },
    );
    if (!live) {
      out.push(
        `${integration.name}: new`,
        ...yamlOf(integration)
          .split('\n')
          .map((text) => `+ ${text}`),
      );
      continue;
    }
    const diff = lineDiff(yamlOf(live.latestRevision.content), yamlOf(integration));
    out.push(
      diff.length
        ? `${integration.name}: changed (live revision ${live.latestRevision.id})`
        : `${integration.name}: unchanged (live revision ${live.latestRevision.id})`,
      ...diff,
    );
  }
  process.stdout.write(`${out.join('\n')}\n`);
  if (values['dry-run']) {
    process.stderr.write('dry run: nothing deployed\n');
    return;
  }
  const deployed = (await client.call<IntegrationView[]>('PUT', client.projectPath('/integrations:batch'), {
    body: { sourceYaml },
  }))!;
  if (values.json) process.stdout.write(`${JSON.stringify(deployed, null, 2)}\n`);
  for (const integration of deployed)
    process.stderr.write(`deployed ${integration.name}: revision ${integration.latestRevision.id}\n`);
}
