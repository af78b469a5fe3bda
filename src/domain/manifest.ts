import { isMap, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import { ProblemError, type ProblemIssue } from '../core/problem.js';
import { decoded, schemaIssues } from '../core/validation.js';
import { ManifestSchema, type Manifest } from '../schemas/integration-content.js';
import { distinctSchedulesIssue, integrationContentIssues } from './integration-content.js';

/** `integrations[0].read.objects[1].schedule` → `['integrations', 0, 'read', 'objects', 1, 'schedule']`. */
function nameToPath(name: string): (string | number)[] {
  return [...name.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((match) =>
    match[2] !== undefined ? Number(match[2]) : match[1],
  );
}

/** The deepest YAML node that exists along `path`, so a missing key points at its parent. */
function nodeAt(document: Document, path: (string | number)[]): Node | undefined {
  for (let length = path.length; length >= 0; length--) {
    const node = document.getIn(path.slice(0, length), true);
    if (node && (isMap(node) || isSeq(node) || typeof node === 'object')) return node as Node;
  }
  return undefined;
}

/**
 * Parses an `amp.yaml` manifest and validates it whole. Every issue names its path and the line
 * and column it starts at, so a builder can jump to it.
 */
export function parseManifest(sourceYaml: string, field = 'sourceYaml'): Manifest {
  const lineCounter = new LineCounter();
  const document = parseDocument(sourceYaml, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const at = (offset: number | undefined) => {
    const position = lineCounter.linePos(offset ?? 0);
    return { line: position.line, column: position.col };
  };
  if (document.errors.length) {
    throw ProblemError.invalid(
      document.errors.map((error) => {
        const { line, column } = at(error.pos[0]);
        return {
          in: 'body',
          name: field,
          detail: `YAML error at line ${line}, column ${column}: ${error.message.split('\n')[0]}`,
        };
      }),
      'The manifest is not valid YAML.',
    );
  }
  let value: unknown;
  try {
    // Aliases are expanded here; a document that expands to millions of nodes is refused.
    value = document.toJS({ maxAliasCount: 100 }) as unknown;
  } catch (error) {
    throw ProblemError.invalid(
      [{ in: 'body', name: field, detail: `${field} could not be expanded: ${(error as Error).message}` }],
      'The manifest is not valid YAML.',
    );
  }
  const issues = schemaIssues(ManifestSchema, value, 'body');
  // Names in NFC from here on, so two spellings of one name are one integration (declared twice).
  if (!issues.length) value = decoded<Manifest>(ManifestSchema, value);
  const tooMany = issues.length ? undefined : distinctSchedulesIssue((value as Manifest).integrations, field);
  if (tooMany) issues.push(tooMany);
  if (!issues.length) {
    const manifest = value as Manifest;
    manifest.integrations.forEach((content, index) => {
      issues.push(...integrationContentIssues(content, `integrations[${index}]`));
    });
    const seen = new Set<string>();
    manifest.integrations.forEach(({ name }, index) => {
      if (seen.has(name)) {
        issues.push({
          in: 'body',
          name: `integrations[${index}].name`,
          value: name,
          detail: `integration "${name}" is declared twice`,
        });
      }
      seen.add(name);
    });
  }
  if (issues.length) {
    throw ProblemError.invalid(
      issues.map((issue): ProblemIssue => {
        const node = nodeAt(document, nameToPath(issue.name));
        const { line, column } = at(node?.range?.[0]);
        return {
          ...issue,
          name: `${field}:${issue.name}`,
          detail: `line ${line}, column ${column}: ${issue.detail}`,
        };
      }),
      'The manifest does not describe valid integrations.',
    );
  }
  return value as Manifest;
}
