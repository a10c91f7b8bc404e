import { offeredHostCapabilitiesSchema, type HostProfile } from '@apphost/contracts';
import { offeredHostCapabilities, type ImplementedHostCapabilities } from './capabilities';

const NOTHING: ImplementedHostCapabilities = {
  serverTools: false,
  serverResources: false,
  logging: false,
  message: [],
  updateModelContext: [],
  openLinks: false,
};
const EVERYTHING: ImplementedHostCapabilities = {
  serverTools: true,
  serverResources: true,
  logging: true,
  message: ['text', 'image', 'audio', 'resource', 'resourceLink', 'structuredContent'],
  updateModelContext: ['text', 'image', 'audio', 'resource', 'resourceLink', 'structuredContent'],
  openLinks: true,
};
/** What this build implements (`IMPLEMENTED_HOST_CAPABILITIES` of governed-operations' bootstrap). */
const THIS_BUILD: ImplementedHostCapabilities = {
  serverTools: true,
  serverResources: true,
  logging: true,
  message: ['text'],
  updateModelContext: ['text', 'structuredContent'],
  openLinks: false,
};
const DECLARES_ALL: HostProfile['hostCapabilities'] = {
  openLinks: true,
  serverTools: true,
  serverResources: true,
  logging: true,
  message: { text: true, image: false },
  updateModelContext: { text: true, structuredContent: true },
};
const DECLARES_NONE: HostProfile['hostCapabilities'] = { openLinks: false, serverTools: false, serverResources: false, logging: false };

describe('offeredHostCapabilities', () => {
  it('offers everything declared when everything is implemented (modalities in the MCP Apps shape)', () => {
    const { offered, dropped } = offeredHostCapabilities(DECLARES_ALL, EVERYTHING);
    expect(offered).toEqual({
      openLinks: {},
      serverTools: {},
      serverResources: {},
      logging: {},
      message: { text: {} },
      updateModelContext: { text: {}, structuredContent: {} },
    });
    expect(dropped).toEqual([]);
    expect(offeredHostCapabilitiesSchema.parse(offered)).toEqual(offered);
  });

  it('offers nothing and drops everything declared when nothing is implemented', () => {
    expect(offeredHostCapabilities(DECLARES_ALL, NOTHING)).toEqual({
      offered: {},
      dropped: ['openLinks', 'serverTools', 'serverResources', 'logging', 'message', 'updateModelContext'],
    });
  });

  it('never offers what the profile does not declare, and does not list it as dropped', () => {
    expect(offeredHostCapabilities(DECLARES_NONE, EVERYTHING)).toEqual({ offered: {}, dropped: [] });
    expect(offeredHostCapabilities(DECLARES_NONE, NOTHING)).toEqual({ offered: {}, dropped: [] });
  });

  it.each(Object.keys(NOTHING) as (keyof ImplementedHostCapabilities)[])('offers %s only when both declared and implemented', (name) => {
    const only: ImplementedHostCapabilities = { ...NOTHING, [name]: EVERYTHING[name] };
    const { offered, dropped } = offeredHostCapabilities(DECLARES_ALL, only);
    expect(Object.keys(offered)).toEqual([name]);
    expect(dropped).not.toContain(name);
    expect(dropped).toHaveLength(5);
    const declaredWithout: HostProfile['hostCapabilities'] = { ...DECLARES_ALL };
    if (name === 'message' || name === 'updateModelContext') delete declaredWithout[name];
    else declaredWithout[name] = false;
    expect(offeredHostCapabilities(declaredWithout, only)).toEqual({ offered: {}, dropped: expect.not.arrayContaining([name]) });
  });

  it('offers an empty modalities object when the profile declares one without a supported modality', () => {
    expect(offeredHostCapabilities({ ...DECLARES_NONE, message: {} }, EVERYTHING)).toEqual({ offered: { message: {} }, dropped: [] });
    expect(offeredHostCapabilities({ ...DECLARES_NONE, updateModelContext: { text: false } }, EVERYTHING)).toEqual({
      offered: { updateModelContext: {} },
      dropped: [],
    });
  });

  it('this build: View RPC, logging, text messages, text and structured context; never links, never an unimplemented modality', () => {
    const declared: HostProfile['hostCapabilities'] = {
      openLinks: true,
      serverTools: true,
      serverResources: true,
      logging: true,
      message: { text: true, image: true, structuredContent: true },
      updateModelContext: { text: true, structuredContent: true, audio: true, resourceLink: true },
    };
    const { offered, dropped } = offeredHostCapabilities(declared, THIS_BUILD);
    expect(offered).toEqual({
      serverTools: {},
      serverResources: {},
      logging: {},
      message: { text: {} },
      updateModelContext: { text: {}, structuredContent: {} },
    });
    expect(dropped).toEqual(['openLinks', 'message.image', 'message.structuredContent', 'updateModelContext.audio', 'updateModelContext.resourceLink']);
    expect(offeredHostCapabilitiesSchema.parse(offered)).toEqual(offered);
  });

  it('this build offers a modality only as far as the profile declares it', () => {
    const declared: HostProfile['hostCapabilities'] = { ...DECLARES_NONE, message: { text: false }, updateModelContext: { text: true } };
    expect(offeredHostCapabilities(declared, THIS_BUILD)).toEqual({ offered: { message: {}, updateModelContext: { text: {} } }, dropped: [] });
  });
});
