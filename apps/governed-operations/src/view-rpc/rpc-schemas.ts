import {
  CallToolRequestSchema,
  CancelledNotificationSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  LoggingMessageNotificationSchema,
  PingRequestSchema,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/core';
import {
  McpUiInitializedNotificationSchema,
  McpUiMessageRequestSchema,
  McpUiRequestTeardownNotificationSchema,
  McpUiSizeChangedNotificationSchema,
  McpUiUpdateModelContextRequestSchema,
} from '@modelcontextprotocol/ext-apps';
import { z } from 'zod';
import { describeIssues, type ViewRpcNotificationMethod, type ViewRpcRequestMethod } from '@apphost/contracts';

/** A published schema of one MCP message without its JSON-RPC envelope (`{ method, params? }`). */
type PublishedSchema = z.ZodType<{ method: string; params?: object }>;

/**
 * `ui/message` as published (`content` an array of blocks, what the SDK's `App.sendMessage` sends); a `content` of one
 * block (as the specification's examples write it) is read as the array of that block.
 */
const MessageRequestSchema = z.preprocess(oneBlockAsArray, McpUiMessageRequestSchema);

function oneBlockAsArray(message: unknown): unknown {
  if (typeof message !== 'object' || message === null) return message;
  const params = (message as { params?: unknown }).params;
  if (typeof params !== 'object' || params === null) return message;
  const content = (params as { content?: unknown }).content;
  if (typeof content !== 'object' || content === null || Array.isArray(content)) return message;
  return { ...message, params: { ...params, content: [content] } };
}

/**
 * The published schema of every method the View RPC serves: MCP core (`@modelcontextprotocol/core`) and MCP Apps
 * (`@modelcontextprotocol/ext-apps`), never a copy, so the View is held to exactly what the protocol says.
 */
const PUBLISHED: Readonly<Record<ViewRpcRequestMethod | ViewRpcNotificationMethod, PublishedSchema>> = {
  'tools/call': CallToolRequestSchema,
  'resources/read': ReadResourceRequestSchema,
  ping: PingRequestSchema,
  'tools/list': ListToolsRequestSchema,
  'resources/list': ListResourcesRequestSchema,
  'resources/templates/list': ListResourceTemplatesRequestSchema,
  'ui/update-model-context': McpUiUpdateModelContextRequestSchema,
  'ui/message': MessageRequestSchema,
  'notifications/cancelled': CancelledNotificationSchema,
  'notifications/message': LoggingMessageNotificationSchema,
  'ui/notifications/initialized': McpUiInitializedNotificationSchema,
  'ui/notifications/size-changed': McpUiSizeChangedNotificationSchema,
  'ui/notifications/request-teardown': McpUiRequestTeardownNotificationSchema,
};

/** At most this many schema issues travel in an error, each cut to a bound (a hostile message could produce thousands). */
const MAX_ISSUES = 8;
const MAX_ISSUE_CHARS = 256;

export type ParamsCheck = { ok: true; params: Record<string, unknown> } | { ok: false; issues: { path: string; message: string }[] };

/** `params` of `method` as its published schema reads them (unknown members dropped), or why they are malformed. */
export function checkParams(method: ViewRpcRequestMethod | ViewRpcNotificationMethod, params: unknown): ParamsCheck {
  const parsed = PUBLISHED[method].safeParse(params === undefined ? { method } : { method, params });
  if (parsed.success) return { ok: true, params: { ...parsed.data.params } };
  return { ok: false, issues: issuesOf(parsed.error) };
}

/** The first few issues of a schema failure, as `{ path, message }`. */
export function issuesOf(error: z.ZodError): { path: string; message: string }[] {
  return describeIssues(error)
    .slice(0, MAX_ISSUES)
    .map(({ path, message }) => ({ path: path.slice(0, MAX_ISSUE_CHARS), message: message.slice(0, MAX_ISSUE_CHARS) }));
}
