import { randomUUID } from 'node:crypto';
import type { BoundGeneration } from '@apphost/contracts';
import { DEFAULT_RESERVED_NAMES } from '../catalog.config';
import { composeAppCatalog, composeModelCatalog, dropCollisions } from './compose';
import { isReserved, toListing, type Candidate } from './listing';
import { resolveOneClass, resolveTwoClass } from './two-class';

const gen = (connectionClass: 'app-safe' | 'full'): BoundGeneration => ({
  generationId: randomUUID(),
  fence: 1,
  ownerInstanceId: 'reg-1',
  toolsetId: 'ts',
  bindingGeneration: 1,
  connectionClass,
});
const uiTool = (name: string, visibility?: unknown) => ({
  name,
  inputSchema: { type: 'object' },
  _meta: { ui: { resourceUri: 'ui://s/w.html', ...(visibility === undefined ? {} : { visibility }) } },
});
const plain = (name: string, description = 'd') => ({ name, description, inputSchema: { type: 'object' } });
const reserved = [...DEFAULT_RESERVED_NAMES];
const none = () => false;
const names = (c: { tools: { exposedName: string }[] }) => c.tools.map((t) => t.exposedName);

/** The visibility table: each case in both catalogs. [model catalog, app catalog, exclusion reason when hidden]. */
const VISIBILITY: [string, unknown, boolean, boolean, string][] = [
  ['absent', undefined, true, true, ''],
  ['["model"]', ['model'], true, false, 'NOT_VISIBLE'],
  ['["app"]', ['app'], false, true, 'NOT_VISIBLE'],
  ['both', ['model', 'app'], true, true, ''],
  ['duplicates', ['app', 'app', 'model', 'model'], true, true, ''],
  ['[]', [], false, false, 'NOT_VISIBLE'],
  ['"app" (a string)', 'app', false, false, 'MALFORMED_VISIBILITY'],
  ['["APP"]', ['APP'], false, false, 'MALFORMED_VISIBILITY'],
  ['numbers', [1, 2], false, false, 'MALFORMED_VISIBILITY'],
  ['an unknown value', ['model', 'assistant'], false, false, 'MALFORMED_VISIBILITY'],
];

describe('catalog composition', () => {
  describe.each(VISIBILITY)('visibility %s', (_label, visibility, inModel, inApp, reason) => {
    const listings = () => {
      const a = toListing(gen('app-safe'), [uiTool('t', visibility), plain('other')]);
      const f = toListing(gen('full'), [uiTool('t', visibility), plain('other')]);
      return { a, f };
    };

    it(inModel ? 'is in the model catalog (prefixed)' : 'is not in the model catalog', () => {
      const { a, f } = listings();
      const r = resolveTwoClass('ts', a, f);
      const model = composeModelCatalog(r.candidates, { toolsetId: 'ts', namePrefix: 'srv' }, reserved, none, 'g');
      expect(names(model).includes('srv_t')).toBe(inModel);
      if (!inModel) expect([...r.excluded, ...model.excluded]).toContainEqual({ toolsetId: 'ts', name: 't', reason });
    });

    it(inApp ? 'is in the app catalog (native name)' : 'is not in the app catalog', () => {
      const r = resolveOneClass('ts', listings().a);
      const app = composeAppCatalog(r.candidates, { mode: 'all-app-visible' }, reserved, none, 'g');
      expect(names(app).includes('t')).toBe(inApp);
      if (!inApp) expect([...r.excluded, ...app.excluded]).toContainEqual({ toolsetId: 'ts', name: 't', reason });
    });
  });

  it('model entries are BoundToolHandles: exact raw declaration, catalog generation, class, execution generation', () => {
    const raw = { ...uiTool('show', ['model', 'app']), description: 'x', annotations: { readOnlyHint: true }, extra: { kept: [1, 2] } };
    const a = toListing(gen('app-safe'), [raw]);
    const f = toListing(gen('full'), [plain('show')]);
    const [h] = composeModelCatalog(resolveTwoClass('ts', a, f).candidates, { toolsetId: 'ts', namePrefix: 'p' }, reserved, none, '1.abc').tools;
    expect(h).toMatchObject({
      exposedName: 'p_show',
      nativeName: 'show',
      declaration: raw,
      catalogGeneration: '1.abc',
      connectionClass: 'app-safe',
      resourceUri: 'ui://s/w.html',
    });
    expect(h.execution).toEqual({ generationId: a.generation.generationId, fence: 1, ownerInstanceId: 'reg-1', bindingGeneration: 1 });
    expect(h.handleId).toMatch(/^th_[0-9a-f]{32}$/);
    expect(h.declaration).not.toBe(raw);
  });

  it('the developer selection filters native names', () => {
    const a = toListing(gen('app-safe'), [plain('a'), plain('b')]);
    const f = toListing(gen('full'), [plain('a'), plain('b')]);
    const model = composeModelCatalog(resolveTwoClass('ts', a, f).candidates, { toolsetId: 'ts', toolFilter: ['b'] }, reserved, none, 'g');
    expect(names(model)).toEqual(['b']);
    expect(model.excluded).toEqual([{ toolsetId: 'ts', name: 'a', reason: 'NOT_SELECTED' }]);
  });

  describe('reserved names, in both catalogs, with and without prefixes', () => {
    it.each([
      ['adk_request_credential', undefined],
      ['transfer_to_agent', 'srv'],
      ['ADK_REQUEST_INPUT', undefined],
      ['other_adk_request_confirmation', undefined],
      ['request_credential', 'adk'],
    ])('%s (prefix %s) is excluded', (name, namePrefix) => {
      const a = toListing(gen('app-safe'), [plain(name), plain('ok')]);
      const f = toListing(gen('full'), [plain(name), plain('ok')]);
      const model = composeModelCatalog(resolveTwoClass('ts', a, f).candidates, { toolsetId: 'ts', namePrefix }, reserved, none, 'g');
      expect(model.tools.map((t) => t.nativeName)).toEqual(['ok']);
      expect(model.excluded).toEqual([{ toolsetId: 'ts', name, reason: 'RESERVED_NAME' }]);
      const app = composeAppCatalog(resolveOneClass('ts', a).candidates, { mode: 'all-app-visible' }, reserved, none, 'g');
      if (namePrefix === 'adk')
        expect(names(app)).toEqual(['request_credential', 'ok']); // app names are native: no prefix to collide
      else expect(names(app)).toEqual(['ok']);
    });

    it('the list is configurable', () => {
      expect(isReserved('my_tool', ['my_tool'])).toBe(true);
      expect(isReserved('adk_request_credential', ['my_tool'])).toBe(false);
      expect(isReserved('transfer_to_agent_v2', reserved)).toBe(false);
    });
  });

  it('app-call policy narrows the app catalog, down to deny-all', () => {
    const r = resolveOneClass('ts', toListing(gen('app-safe'), [plain('a'), plain('b')]));
    expect(names(composeAppCatalog(r.candidates, { mode: 'allow', names: ['b'] }, reserved, none, 'g'))).toEqual(['b']);
    expect(composeAppCatalog(r.candidates, { mode: 'deny-all' }, reserved, none, 'g').tools).toEqual([]);
  });

  it('quarantined tools are excluded from both catalogs', () => {
    const a = toListing(gen('app-safe'), [plain('q'), plain('ok')]);
    const f = toListing(gen('full'), [plain('q'), plain('ok')]);
    const isQ = (c: Candidate) => c.tool.name === 'q';
    expect(names(composeModelCatalog(resolveTwoClass('ts', a, f).candidates, { toolsetId: 'ts' }, reserved, isQ, 'g'))).toEqual(['ok']);
    expect(names(composeAppCatalog(resolveOneClass('ts', a).candidates, { mode: 'all-app-visible' }, reserved, isQ, 'g'))).toEqual(['ok']);
  });

  it('exposed names colliding across toolsets are dropped, and duplicates within a listing too', () => {
    const one = { tools: [{ exposedName: 'x', toolsetId: 'a', nativeName: 'x' }], excluded: [] };
    const two = { tools: [{ exposedName: 'x', toolsetId: 'b', nativeName: 'x' }], excluded: [] };
    expect(dropCollisions([one, two] as never).tools).toEqual([]);
    expect(resolveOneClass('ts', toListing(gen('app-safe'), [plain('d'), plain('d', 'other')])).excluded).toEqual([
      { toolsetId: 'ts', name: 'd', reason: 'DUPLICATE_NAME' },
    ]);
  });
});

describe('two-class resolution', () => {
  it('capability-adapted metadata: UI on app-safe, plain on full → the app-safe declaration, bound to app-safe (divergence logged)', () => {
    const a = toListing(gen('app-safe'), [uiTool('w')]);
    const f = toListing(gen('full'), [plain('w')]);
    const r = resolveTwoClass('ts', a, f);
    expect(r.candidates.map((c) => [c.tool.name, c.generation.connectionClass, c.tool.ui.kind])).toEqual([['w', 'app-safe', 'ui']]);
    expect(r.divergences).toHaveLength(1);
  });

  it('the same name with different schemas: UI tools keep the app-safe schema, non-UI tools the full one', () => {
    const a = toListing(gen('app-safe'), [
      { ...uiTool('u'), inputSchema: { type: 'object', properties: { a: {} } } },
      { ...plain('n'), inputSchema: { type: 'object', properties: { a: {} } } },
    ]);
    const f = toListing(gen('full'), [
      { ...uiTool('u'), inputSchema: { type: 'object', properties: { b: {} } } },
      { ...plain('n'), inputSchema: { type: 'object', properties: { b: {} } } },
    ]);
    const r = resolveTwoClass('ts', a, f);
    const byName = new Map(r.candidates.map((c) => [c.tool.name, c]));
    expect(byName.get('u')!.tool.declaration['inputSchema']).toEqual({ type: 'object', properties: { a: {} } });
    expect(byName.get('u')!.generation.connectionClass).toBe('app-safe');
    expect(byName.get('n')!.tool.declaration['inputSchema']).toEqual({ type: 'object', properties: { b: {} } });
    expect(byName.get('n')!.generation.connectionClass).toBe('full');
  });

  it('UI/non-UI disagreement the other way round fails closed; a tool on one class only is judged by where it would run', () => {
    const a = toListing(gen('app-safe'), [plain('flip'), plain('only-app-safe'), uiTool('ui-only-app-safe')]);
    const f = toListing(gen('full'), [uiTool('flip'), uiTool('ui-only-full'), plain('only-full')]);
    const r = resolveTwoClass('ts', a, f);
    expect(r.excluded).toEqual([
      { toolsetId: 'ts', name: 'flip', reason: 'CLASS_DISAGREEMENT' },
      { toolsetId: 'ts', name: 'only-app-safe', reason: 'CLASS_MISSING' },
      { toolsetId: 'ts', name: 'ui-only-full', reason: 'CLASS_DISAGREEMENT' },
    ]);
    expect(r.candidates.map((c) => [c.tool.name, c.generation.connectionClass])).toEqual([
      ['ui-only-app-safe', 'app-safe'],
      ['only-full', 'full'],
    ]);
  });

  it('malformed _meta.ui on either class denies the tool', () => {
    const r = resolveTwoClass('ts', toListing(gen('app-safe'), [{ ...plain('m'), _meta: { ui: 'x' } }]), toListing(gen('full'), [plain('m')]));
    expect(r.excluded).toEqual([{ toolsetId: 'ts', name: 'm', reason: 'MALFORMED_UI_META' }]);
  });
});
