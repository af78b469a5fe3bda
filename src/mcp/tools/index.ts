import type { Tool } from '../tool.js';
import { describeObjectTool, listObjects } from './objects.js';
import { connectionStatus, proxyRequest } from './provider.js';
import { readRecordsTool, searchRecordsTool } from './records.js';
import { createRecord, deleteRecord, updateRecord } from './writes.js';

/** Every tool an MCP session offers, in the order an agent would reach for them. */
export const tools: readonly Tool[] = [
  listObjects,
  describeObjectTool,
  searchRecordsTool,
  readRecordsTool,
  createRecord,
  updateRecord,
  deleteRecord,
  proxyRequest,
  connectionStatus,
];

export const toolsByName = new Map(tools.map((tool) => [tool.name, tool]));
