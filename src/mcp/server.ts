import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { callTool, type McpSession } from './calls.js';
import { tools } from './tools/index.js';

/**
 * The MCP server of one session. Tools are listed and called through the protocol's own handlers
 * rather than `registerTool`: their input schemas are Ferry's TypeBox schemas (JSON Schema already,
 * no zod copy to drift), and every call, an unknown tool's and one with wrong arguments included, goes
 * through `callTool`, so it is rate-limited, recorded as an operation and answered as a tool error.
 */

const version = '0.1.0';

export function createMcpServer(session: McpSession): McpServer {
  const { scope } = session;
  const mcp = new McpServer(
    { name: 'ferry', title: 'Ferry', version },
    {
      instructions: `Tools act on one installation: integration "${scope.integrationName}" of group "${scope.groupRef}" in project "${scope.projectName}", through the customer's own connection to the provider. Start with list_objects, then describe_object before writing. Writes change the customer's data.`,
    },
  );
  mcp.server.registerCapabilities({ tools: { listChanged: false } });
  mcp.server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: tools.map((tool) => ({
      name: tool.name,
      title: tool.title,
      description: tool.description,
      inputSchema: tool.input as unknown as { type: 'object'; [key: string]: unknown },
      annotations: { title: tool.title, ...tool.annotations },
    })),
  }));
  mcp.server.setRequestHandler(CallToolRequestSchema, (request) =>
    callTool(session, request.params.name, request.params.arguments),
  );
  return mcp;
}
