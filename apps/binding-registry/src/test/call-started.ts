import { deferred } from '@apphost/testing';
import { McpConnection } from '@apphost/mcp';

/**
 * Resolves when a registry in this process hands a `tools/call` of `name` to its MCP connection: the call is then
 * registered under its call id and in flight (the handler records it before it calls the connection). Replaces
 * sleeping "long enough" for a call to have started.
 */
export function callStarted(name: string): Promise<void> {
  const original = McpConnection.prototype.callTool;
  return new Promise((resolve) => {
    const spy = jest.spyOn(McpConnection.prototype, 'callTool').mockImplementation(function (this: McpConnection, input, options) {
      if (input.name === name) {
        spy.mockRestore();
        resolve();
      }
      return original.call(this, input, options);
    });
  });
}

/**
 * Like `callStarted`, but the call stays in flight (registered, counted as a reference) until the test calls
 * `release()`; only then does it reach the MCP server. Keeps a call in flight for as long as a test needs,
 * without making the server sleep "long enough".
 */
export function callHeld(name: string): { started: Promise<void>; release(): void } {
  const original = McpConnection.prototype.callTool;
  const started = deferred();
  const released = deferred();
  const spy = jest.spyOn(McpConnection.prototype, 'callTool').mockImplementation(function (this: McpConnection, input, options) {
    if (input.name !== name) return original.call(this, input, options);
    spy.mockRestore();
    started.resolve();
    return released.promise.then(() => original.call(this, input, options));
  });
  return { started: started.promise, release: () => released.resolve() };
}

/**
 * Like `callHeld`, for the next resource listing (`listResources` / `listResourceTemplates`) of any connection: it
 * stays in flight until `release()`, then walks its pages.
 */
export function listingHeld(method: 'listResources' | 'listResourceTemplates'): { started: Promise<void>; release(): void } {
  const original = McpConnection.prototype[method] as (this: McpConnection, ...args: unknown[]) => Promise<unknown>;
  const started = deferred();
  const released = deferred();
  const spy = jest.spyOn(McpConnection.prototype, method).mockImplementation(function (this: McpConnection, ...args: unknown[]) {
    spy.mockRestore();
    started.resolve();
    return released.promise.then(() => original.apply(this, args)) as never;
  });
  return { started: started.promise, release: () => released.resolve() };
}
