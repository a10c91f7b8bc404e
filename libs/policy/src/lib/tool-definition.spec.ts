import { classifyToolDeclaration, toolFingerprint } from './tool-definition';

describe('tool definitions', () => {
  const base = { name: 't', description: 'd', inputSchema: { type: 'object', properties: { a: { type: 'string' } } } };

  it('fingerprints name, description, schemas and _meta.ui, independent of key order and other fields', () => {
    const fp = toolFingerprint(base);
    expect(fp).toMatch(/^[0-9a-f]{64}$/);
    expect(toolFingerprint({ inputSchema: base.inputSchema, description: 'd', name: 't', annotations: { x: 1 }, _meta: { other: 1 } })).toBe(fp);
    expect(toolFingerprint({ ...base, description: 'd2' })).not.toBe(fp);
    expect(toolFingerprint({ ...base, inputSchema: { type: 'object' } })).not.toBe(fp);
    expect(toolFingerprint({ ...base, outputSchema: { type: 'object' } })).not.toBe(fp);
    expect(toolFingerprint({ ...base, _meta: { ui: { resourceUri: 'ui://a/b' } } })).not.toBe(fp);
  });

  it('classifies UI, non-UI and malformed declarations', () => {
    expect(classifyToolDeclaration(base)).toEqual({ kind: 'non-ui', visibility: ['model', 'app'] });
    expect(classifyToolDeclaration({ ...base, _meta: { ui: { resourceUri: 'UI://A/b#x', visibility: ['app'] } } })).toEqual({
      kind: 'ui',
      resourceUri: 'ui://a/b',
      visibility: ['app'],
    });
    expect(classifyToolDeclaration({ ...base, _meta: { 'ui/resourceUri': 'ui://a/b' } })).toMatchObject({ kind: 'ui', resourceUri: 'ui://a/b' });
    expect(classifyToolDeclaration({ ...base, _meta: { ui: { visibility: [] } } })).toEqual({ kind: 'non-ui', visibility: [] });
    expect(classifyToolDeclaration({ ...base, _meta: { ui: { visibility: 'app' } } })).toEqual({ kind: 'malformed', why: 'VISIBILITY' });
    expect(classifyToolDeclaration({ ...base, _meta: { ui: 'x' } })).toEqual({ kind: 'malformed', why: 'UI_META' });
    expect(classifyToolDeclaration({ ...base, _meta: { ui: { resourceUri: 'https://a/b' } } })).toEqual({ kind: 'malformed', why: 'UI_META' });
    expect(classifyToolDeclaration({ ...base, _meta: { ui: { resourceUri: 'ui://a/../b' } } })).toEqual({ kind: 'malformed', why: 'UI_META' });
    expect(classifyToolDeclaration({ ...base, _meta: { ui: { resourceUri: 7 } } })).toEqual({ kind: 'malformed', why: 'UI_META' });
  });
});
