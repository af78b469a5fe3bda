import type { EntityManager } from '@mikro-orm/postgresql';
import { ProblemError } from '../core/problem.js';
import { schemaIssues } from '../core/validation.js';
import { em as newEntityManager, transaction } from '../db/orm.js';
import type { Installation } from '../db/entities/installation.js';
import { appendLogs, type LogEntry } from '../domain/operation-logs.js';
import { createOperation } from '../domain/operations.js';
import { logger } from '../logger.js';
import { mcpToolCallDuration, mcpToolCalls } from '../metrics.js';
import { toProblem } from '../providers/errors.js';
import type { Config } from '../config.js';
import type { CallLimiter } from './rate-limit.js';
import { currentInstallation, type McpScope } from './scope.js';
import type { McpCallFacts, Tool } from './tool.js';
import { tools, toolsByName } from './tools/index.js';

/**
 * One tool call of an agent, end to end: rate-limited per session, its arguments checked against the
 * tool's schema, run, and recorded as an operation of the installation (`mcp.tool`) with its logs and
 * counted in metrics. Whatever goes wrong comes back as a tool error (`isError`) whose text says what
 * to do, never as a protocol error that would end the agent's turn, nor a crash of the session.
 */

export interface McpSession {
  id: string;
  transport: 'http' | 'stdio';
  scope: McpScope;
  limiter: CallLimiter;
  /** The deployment's settings, read where the session's listener or command started. */
  settings: Config;
}

export interface ToolCallAnswer {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** Longest string kept of an argument in the call's operation (a proxied body may be large). */
const MAX_LOGGED_STRING = 1000;

function errorAnswer(text: string): ToolCallAnswer {
  return { content: [{ type: 'text', text }], isError: true };
}

/** Names whose values are taken for secrets wherever they appear in the arguments. */
const SECRET_NAME = /pass(word)?|secret|token|api[-_]?key|authorization|cookie|credential/i;

/** The arguments as recorded: secrets replaced (the tool's secret arguments, secret-looking names), long strings cut. */
function loggedArguments(tool: Tool | undefined, args: Record<string, unknown>): Record<string, unknown> {
  const secret = new Set(tool?.secretArguments ?? []);
  const cut = (value: unknown): unknown =>
    typeof value === 'string' && value.length > MAX_LOGGED_STRING
      ? `${value.slice(0, MAX_LOGGED_STRING)}… (${value.length} characters)`
      : Array.isArray(value)
        ? value.map(cut)
        : value && typeof value === 'object'
          ? Object.fromEntries(
              Object.entries(value).map(([key, inner]) => [
                key,
                SECRET_NAME.test(key) ? '[redacted]' : cut(inner),
              ]),
            )
          : value;
  return Object.fromEntries(
    Object.entries(args).map(([name, value]) => {
      if (SECRET_NAME.test(name)) return [name, '[redacted]'];
      if (!secret.has(name)) return [name, cut(value)];
      // A map of secrets (headers) keeps its names, so the log still says what was sent.
      return [
        name,
        value && typeof value === 'object'
          ? Object.fromEntries(Object.keys(value).map((key) => [key, '[redacted]']))
          : '[redacted]',
      ];
    }),
  );
}

/** A problem as an agent reads it: what was wrong, each issue, what to do instead, whether to retry. */
function problemText(problem: ProblemError, operationId?: string): string {
  return [
    problem.detail ?? problem.title,
    ...(problem.issues ?? []).map((issue) => `- ${issue.detail}`),
    ...(problem.remedy ? [problem.remedy] : []),
    ...(problem.retryable === true
      ? [`Trying again later may succeed${problem.retryAfter ? ` (after ${problem.retryAfter} s)` : ''}.`]
      : []),
    ...(operationId ? [`(Ferry operation ${operationId})`] : []),
  ].join('\n');
}

function unknownTool(name: string): ProblemError {
  return ProblemError.notFound(
    `There is no tool "${name}".`,
    `Tools: ${tools.map((tool) => tool.name).join(', ')}.`,
  );
}

interface Outcome {
  result?: unknown;
  problem?: ProblemError;
}

async function run(
  em: EntityManager,
  session: McpSession,
  installation: Installation,
  tool: Tool | undefined,
  name: string,
  args: Record<string, unknown>,
  logs: LogEntry[],
  facts: McpCallFacts,
): Promise<Outcome> {
  try {
    if (!tool) throw unknownTool(name);
    const issues = schemaIssues(tool.input, args, 'body', '');
    if (issues.length) {
      throw ProblemError.invalid(issues, `The arguments do not match ${name}'s input schema.`);
    }
    return {
      result: await tool.run(
        { em, scope: session.scope, installation, logs, facts, settings: session.settings },
        args as never,
      ),
    };
  } catch (error) {
    const problem = toProblem(error);
    if (problem instanceof ProblemError) return { problem };
    logger.error({ err: error, tool: name, sessionId: session.id }, 'MCP tool call failed unexpectedly');
    return {
      problem: new ProblemError({
        status: 500,
        detail: `Ferry hit an unexpected error running ${name}; nothing more is known to the agent.`,
      }),
    };
  }
}

/** Records the finished call as an operation with its logs; a failure to record never fails the call. */
async function recordCall(
  session: McpSession,
  installation: Installation,
  call: { tool: string; args: Record<string, unknown>; started: Date; outcome: Outcome },
  logs: LogEntry[],
  facts: McpCallFacts,
): Promise<string | undefined> {
  const { problem } = call.outcome;
  try {
    return await transaction(async (em) => {
      const operation = createOperation(em, {
        projectId: installation.projectId,
        integrationId: installation.integrationId,
        installationId: installation.id,
        configId: installation.configId,
        actionType: 'mcp.tool',
        metadata: {
          tool: call.tool,
          arguments: call.args,
          sessionId: session.id,
          transport: session.transport,
          caller: session.scope.caller,
          durationMs: Date.now() - call.started.getTime(),
          ...facts,
        },
      });
      operation.createTime = call.started;
      operation.status = problem ? 'failure' : 'success';
      operation.result = problem ? `${call.tool}: ${problem.detail ?? problem.title}` : `${call.tool}: done`;
      appendLogs(em, installation.projectId, operation.id, [
        {
          severity: 'INFO',
          msg: `Agent called ${call.tool}`,
          details: { arguments: call.args },
          timestamp: call.started,
        },
        ...logs,
        problem
          ? {
              severity: problem.status >= 500 ? 'ERROR' : 'WARN',
              msg: `${call.tool} refused (${problem.status})`,
              error: problemText(problem),
            }
          : { severity: 'INFO', msg: `${call.tool} answered` },
      ]);
      await em.flush();
      return operation.id;
    });
  } catch (error) {
    logger.warn({ err: error, tool: call.tool, sessionId: session.id }, 'could not record an MCP tool call');
    return undefined;
  }
}

export async function callTool(
  session: McpSession,
  name: string,
  rawArgs: Record<string, unknown> | undefined,
): Promise<ToolCallAnswer> {
  const tool = toolsByName.get(name);
  const label = tool ? tool.name : 'unknown';
  const allowed = session.limiter.take();
  if (!allowed.allowed) {
    mcpToolCalls.inc({ tool: label, outcome: 'refused' });
    return errorAnswer(
      `Rate limit: this session may make ${session.limiter.perMinute} tool calls a minute. Wait ${allowed.retryAfterSeconds} s before the next call.`,
    );
  }
  const started = new Date();
  const stopTimer = mcpToolCallDuration.startTimer({ tool: label });
  const em = await newEntityManager();
  let installation: Installation;
  try {
    installation = await currentInstallation(em, session.scope);
  } catch (error) {
    mcpToolCalls.inc({ tool: label, outcome: 'failure' });
    stopTimer();
    const problem = toProblem(error);
    if (problem instanceof ProblemError) return errorAnswer(problemText(problem));
    logger.error({ err: error, sessionId: session.id }, 'MCP session could not find its installation');
    return errorAnswer('Ferry could not find this session’s installation right now; try again shortly.');
  }
  const args = rawArgs ?? {};
  const logs: LogEntry[] = [];
  const facts: McpCallFacts = {};
  const outcome = await run(em, session, installation, tool, name, args, logs, facts);
  const operationId = await recordCall(
    session,
    installation,
    { tool: name, args: loggedArguments(tool, args), started, outcome },
    logs,
    facts,
  );
  stopTimer();
  mcpToolCalls.inc({ tool: label, outcome: outcome.problem ? 'failure' : 'success' });
  if (outcome.problem) return errorAnswer(problemText(outcome.problem, operationId));
  const structured = { ...(outcome.result as Record<string, unknown>), ...(operationId && { operationId }) };
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
}
