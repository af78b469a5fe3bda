import { options } from './options.js';
import { ProblemError } from '../core/problem.js';
import { config } from '../config.js';
import { closeOrm } from '../db/orm.js';
import { serveStdio } from '../mcp/stdio.js';

/**
 * `ferry mcp --project <idOrName> --integration <idOrName> --group <groupRef>`: an MCP server on
 * stdin/stdout for one installation, as desktop AI clients start it. The credential comes from the
 * environment, never the command line (where `ps` would show it): FERRY_API_KEY, or FERRY_PROJECT_JWT
 * (a project JWT minted for the group).
 */
export async function mcpCommand(args: string[]): Promise<void> {
  const values = options(args, {
    project: { type: 'string' },
    integration: { type: 'string' },
    group: { type: 'string' },
  });
  const apiKey = process.env.FERRY_API_KEY?.trim();
  const bearer = process.env.FERRY_PROJECT_JWT?.trim();
  if (!apiKey && !bearer) {
    throw new Error('set FERRY_API_KEY (or FERRY_PROJECT_JWT, a project JWT minted for the group)');
  }
  try {
    await serveStdio(
      { project: values.project, integration: values.integration, groupRef: values.group },
      { ...(apiKey && { apiKey }), ...(!apiKey && bearer && { bearer }) },
      config(),
    );
  } catch (error) {
    if (!(error instanceof ProblemError)) throw error;
    const issues = (error.issues ?? []).map((issue) => `; ${issue.detail}`).join('');
    throw new Error(`${error.detail ?? error.title}${issues}${error.remedy ? ` ${error.remedy}` : ''}`);
  } finally {
    await closeOrm();
  }
  // The client hung up: end now, not when idle keep-alive sockets to the provider time out.
  process.exit(0);
}
