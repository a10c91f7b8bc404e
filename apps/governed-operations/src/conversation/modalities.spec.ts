import type { HostProfile } from '@apphost/contracts';
import { testProfile } from '../test/fake-plane';
import { advertisedModalities, assertAdvertised } from './modalities';

const profileWith = (capabilities: Partial<HostProfile['hostCapabilities']>): HostProfile => {
  const base = testProfile();
  return { ...base, hostCapabilities: { ...base.hostCapabilities, ...capabilities } };
};

describe('advertised modalities (the bootstrap’s offer, as the barrier checks it)', () => {
  const everything = { text: true, image: true, audio: true, resource: true, resourceLink: true, structuredContent: true };

  it('is the profile’s declaration intersected with what this build implements', () => {
    const profile = profileWith({ message: everything, updateModelContext: everything });
    expect([...advertisedModalities(profile, 'message')]).toEqual(['text']);
    expect([...advertisedModalities(profile, 'updateModelContext')]).toEqual(['text', 'structuredContent']);
    expect([...advertisedModalities(testProfile(), 'message')]).toEqual([]);
  });

  it('accepts only advertised content; names the first modality it refuses', () => {
    const profile = profileWith({ message: { text: true }, updateModelContext: { text: true } });
    expect(() => assertAdvertised(profile, 'message', [{ type: 'text' }, { type: 'text' }], false)).not.toThrow();
    expect(() => assertAdvertised(profile, 'updateModelContext', [], false)).not.toThrow();
    const refusal = (content: { type: string }[], structured: boolean) => {
      try {
        assertAdvertised(profile, 'updateModelContext', content, structured);
      } catch (error) {
        return error;
      }
      throw new Error('expected a refusal');
    };
    expect(refusal([{ type: 'text' }, { type: 'audio' }], false)).toMatchObject({
      code: 'INVALID_ARGUMENT',
      details: { reason: 'MODALITY_NOT_ADVERTISED', capability: 'updateModelContext', modality: 'audio' },
    });
    expect(refusal([{ type: 'resource_link' }], false)).toMatchObject({ details: { modality: 'resourceLink' } });
    expect(refusal([{ type: 'text' }], true)).toMatchObject({ details: { modality: 'structuredContent' } });
    expect(refusal([{ type: 'x'.repeat(500) }], false)).toMatchObject({ details: { modality: 'x'.repeat(64) } });
  });
});
