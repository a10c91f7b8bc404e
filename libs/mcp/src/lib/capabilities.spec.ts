import { advertisesUiExtension, buildClientCapabilities } from './capabilities';

describe('buildClientCapabilities', () => {
  it('advertises the MCP Apps extension only on an app-safe connection that asks for it', () => {
    expect(buildClientCapabilities('app-safe', true)).toEqual({ extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } } });
    expect(buildClientCapabilities('app-safe', false)).toEqual({});
    expect(buildClientCapabilities('full', true)).toEqual({ elicitation: { form: {} } });
    expect(advertisesUiExtension(buildClientCapabilities('full', true))).toBe(false);
  });

  it('never advertises sampling, elicitation or roots on app-safe connections', () => {
    for (const ui of [true, false]) {
      const caps = buildClientCapabilities('app-safe', ui) as Record<string, unknown>;
      expect(caps['sampling']).toBeUndefined();
      expect(caps['elicitation']).toBeUndefined();
      expect(caps['roots']).toBeUndefined();
    }
  });

  it('refuses an advertisement without the MCP App MIME type', () => {
    expect(() => buildClientCapabilities('app-safe', true, ['text/html'])).toThrow(/text\/html;profile=mcp-app/);
  });
});
