import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config.js';
import type { Static, TObject } from 'typebox';
import type { Installation } from '../db/entities/installation.js';
import type { LogEntry } from '../domain/operation-logs.js';
import type { McpScope } from './scope.js';
import type { McpToolOperationMetadata } from '../schemas/operation-metadata.js';

export type McpCallFacts = Pick<McpToolOperationMetadata, 'writeOperationId'>;

/**
 * One tool an agent may call: its input schema (TypeBox, so the JSON Schema the agent reads is the
 * one its arguments are checked against), the hints MCP clients show before running it, and what
 * it does. A tool throws a `ProblemError` (or a connector error) for anything it refuses; the call
 * turns it into a tool error the agent can act on.
 */

/** MCP's tool annotations (hints to the client; a client must not trust them for safety). */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

export interface CallContext {
  em: EntityManager;
  /** The deployment's settings, handed to the session where it started. */
  settings: Config;
  scope: McpScope;
  /** The session's installation, found again for this call. */
  installation: Installation;
  /** Entries for the call's operation log (provider requests, what the tool decided). */
  logs: LogEntry[];
  /** Facts for the call's operation metadata (the id of a write's own operation). */
  facts: McpCallFacts;
}

export interface Tool<S extends TObject = TObject> {
  name: string;
  title: string;
  description: string;
  input: S;
  annotations: ToolAnnotations;
  /** Argument names whose values are secrets: recorded as `[redacted]` in the call's operation. */
  secretArguments?: string[];
  run(call: CallContext, args: Static<S>): Promise<unknown>;
}

/** Keeps the input schema's static type for `run`, and erases it for the list of tools. */
export function defineTool<S extends TObject>(tool: Tool<S>): Tool {
  return tool as unknown as Tool;
}

/** Read-only tools: they change nothing at the provider or in Ferry. */
export const readOnly: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: true,
};
