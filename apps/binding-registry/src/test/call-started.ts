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
