import { iframeAllow } from './permissions';

describe('iframeAllow', () => {
  it.each<[unknown, string]>([
    [{ camera: {}, microphone: {}, geolocation: {}, clipboardWrite: {} }, 'camera; microphone; geolocation; clipboard-write'],
    [{ clipboardWrite: {}, camera: {} }, 'camera; clipboard-write'],
    [{ geolocation: true }, 'geolocation'],
    [{ microphone: { reason: 'dictation' } }, 'microphone'],
    [{ camera: false, microphone: null, geolocation: 'yes', clipboardWrite: [] }, ''],
    [{ camera: 1, microphone: undefined }, ''],
    [{ usb: {}, 'clipboard-write': {}, clipboardRead: {}, fullscreen: true, camera: {} }, 'camera'],
    [{}, ''],
    [undefined, ''],
    [null, ''],
    ['camera', ''],
    [['camera'], ''],
    [{ camera: {}, microphone: "{}; usb 'src'" }, 'camera'],
  ])('%j → %j', (permissions, allow) => {
    expect(iframeAllow(permissions)).toBe(allow);
  });
});
