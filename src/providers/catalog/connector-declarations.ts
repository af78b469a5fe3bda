import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { schemaIssues } from '../../core/validation.js';
import type { ConnectorCapabilities } from '../../schemas/capabilities.js';
import {
  ConnectorDeclarationSchema,
  type ConnectorDeclaration,
} from '../../schemas/connector-declaration.js';
import { Checker, effectiveObject, webhookProblems } from './declaration-checks.js';

export { effectiveObject };

/**
 * Deep connector declarations, one JSON file per provider under `connectors/`, read and checked once
 * at start: the schema, then what a schema cannot say (declaration-checks.ts: placeholders known
 * where they are used, the pagination's placeholder present, `{{id}}` in update and delete paths,
 * `vars` defined). A mistake stops Ferry at start with a message naming the provider, the object
 * and the field.
 */

export class ConnectorDeclarationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConnectorDeclarationError';
  }
}

const connectorsDir = fileURLToPath(new URL('./connectors/', import.meta.url));
/** Checks one parsed declaration file; throws a ConnectorDeclarationError listing every problem. */
export function checkDeclaration(
  file: string,
  value: unknown,
  knownProviders: ReadonlySet<string>,
): ConnectorDeclaration {
  const issues = schemaIssues(ConnectorDeclarationSchema, value, 'body');
  if (issues.length) {
    const provider = (value as { provider?: unknown })?.provider;
    throw new ConnectorDeclarationError(
      `Connector declaration ${file}${typeof provider === 'string' ? ` (${provider})` : ''} is not valid:\n` +
        issues.map((issue) => `- ${issue.detail}`).join('\n'),
    );
  }
  const declaration = value as ConnectorDeclaration;
  const problems: string[] = [];
  const expected = file.replace(/\.json$/, '');
  if (declaration.provider !== expected)
    problems.push(`${declaration.provider}: provider: the file is named "${file}"`);
  if (!knownProviders.has(declaration.provider)) {
    problems.push(`${declaration.provider}: provider: not in the provider catalog`);
  }
  for (const name of Object.keys(declaration.objects)) {
    const checker = new Checker(declaration.provider, effectiveObject(declaration, name)!);
    checker.check(`objects.${name}`);
    problems.push(...checker.problems);
    const deletions = declaration.objects[name].read?.deletions ?? declaration.defaults?.read?.deletions;
    // Only hooks keep the position of a listing of deletions (see `Listing.resume`).
    if (deletions?.style === 'listing' && deletions.listing.resume && !declaration.hooks)
      problems.push(
        `${declaration.provider}: objects.${name}.read.deletions.listing.resume: needs hooks that walk the listing and keep its position`,
      );
  }
  if (declaration.webhooks) problems.push(...webhookProblems(declaration, declaration.webhooks));
  declaration.pacing?.forEach((rule, index) => {
    try {
      new RegExp(rule.path);
    } catch (error) {
      problems.push(`${declaration.provider}: pacing.${index}.path: ${(error as Error).message}`);
    }
  });
  if (problems.length) {
    throw new ConnectorDeclarationError(
      `Connector declaration ${file} is not valid:\n- ${problems.join('\n- ')}`,
    );
  }
  return declaration;
}

/** Every declaration, keyed by provider; files that do not parse or check stop the load. */
export function loadConnectorDeclarations(
  knownProviders: ReadonlySet<string>,
  dir = connectorsDir,
): ReadonlyMap<string, ConnectorDeclaration> {
  const declarations = new Map<string, ConnectorDeclaration>();
  for (const file of readdirSync(dir)
    .filter((name) => name.endsWith('.json'))
    .sort()) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(join(dir, file), 'utf8'));
    } catch (error) {
      throw new ConnectorDeclarationError(
        `Connector declaration ${file} is not valid JSON: ${(error as Error).message}`,
      );
    }
    const declaration = checkDeclaration(file, parsed, knownProviders);
    declarations.set(declaration.provider, declaration);
  }
  return declarations;
}

/** What a declaration lets a connector do, before the catalog adds `proxy`. */
export function declaredCapabilities(
  declaration: ConnectorDeclaration,
): Omit<ConnectorCapabilities, 'proxy'> {
  const objects = Object.keys(declaration.objects).map((name) => effectiveObject(declaration, name)!);
  const extra = new Set(declaration.hooks?.capabilities ?? []);
  return {
    read: objects.some((object) => object.read),
    write: objects.some((object) => object.write?.create || object.write?.update),
    delete: objects.some((object) => object.write?.delete),
    objectMetadata: objects.some((object) => object.metadata || object.fields),
    customFields: extra.has('customFields'),
    subscribe: extra.has('subscribe') || declaration.webhooks !== undefined,
    count: extra.has('count') || objects.some((object) => object.read?.count),
    search: objects.some((object) => object.search),
  };
}
