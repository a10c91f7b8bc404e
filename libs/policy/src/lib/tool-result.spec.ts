import { AppHostError } from '@apphost/contracts';
import { projectForModel } from './projection';
import { validateToolResult } from './tool-result';

const full = {
  content: [{ type: 'text', text: 'CPU 12%' }],
  structuredContent: { cpu: 12, hosts: ['a'] },
  _meta: { 'io.modelcontextprotocol/ui': { resourceUri: 'ui://monitor/app' } },
  isError: false,
  resultType: 'complete',
  secretExtra: 'never for the model',
};

describe('projectForModel', () => {
  it('keeps exactly content, isError and resultType', () => {
    const projection = projectForModel(full);
    expect(Object.keys(projection).sort()).toEqual(['content', 'isError', 'resultType']);
    expect(projection).toEqual({ content: full.content, isError: false, resultType: 'complete' });
  });

  it('keeps isError: true and omits fields the result did not have', () => {
    expect(projectForModel({ content: [{ type: 'text', text: 'boom' }], isError: true, structuredContent: { x: 1 } })).toEqual({
      content: [{ type: 'text', text: 'boom' }],
      isError: true,
    });
  });

  it('does not mutate the input and shares no references with it', () => {
    const input = structuredClone(full);
    const projection = projectForModel(input);
    expect(input).toEqual(full);
    (projection.content as { text: string }[])[0].text = 'changed';
    expect(input.content[0].text).toBe('CPU 12%');
  });
});

describe('validateToolResult', () => {
  it('accepts a terminal result with meaningful content, keeping every field', () => {
    expect(validateToolResult(full)).toEqual(full);
    for (const result of [
      { content: [{ type: 'image', data: 'aGk=', mimeType: 'image/png' }] },
      { content: [{ type: 'resource', resource: { uri: 'ui://a/b', text: 'x' } }] },
    ]) {
      expect(validateToolResult(result)).toEqual(result);
    }
  });

  it.each([
    ['empty content', { content: [] }],
    ['no content', { structuredContent: {} }],
    ['only blank text', { content: [{ type: 'text', text: '  ' }] }],
    ['an unknown block type', { content: [{ type: 'video', url: 'x' }] }],
    ['a text block without text', { content: [{ type: 'text' }] }],
    ['image data that is not base64', { content: [{ type: 'image', data: '!!', mimeType: 'image/png' }] }],
    ['a non-boolean isError', { content: [{ type: 'text', text: 'x' }], isError: 'false' }],
    ['a non-terminal resultType', { content: [{ type: 'text', text: 'x' }], resultType: 'input_required' }],
    ['not an object', 'result'],
  ])('rejects %s with INVALID_ARGUMENT', (_label, result) => {
    expect(() => validateToolResult(result)).toThrow(AppHostError);
    try {
      validateToolResult(result);
    } catch (error) {
      expect((error as AppHostError).code).toBe('INVALID_ARGUMENT');
      expect((error as AppHostError).details?.issues).toEqual(expect.any(Array));
    }
  });
});
