import type { HostProfile } from '@apphost/contracts';
import { testProfile } from '../test/fake-plane';
import { templateAllowed, uriAllowed } from './view-operations';

const profileWith = (entries: HostProfile['resourcePolicy']['entries']): HostProfile => ({ ...testProfile(), resourcePolicy: { revision: 'r', entries } });

describe('View listings under the resource policy', () => {
  const docs = profileWith([
    { match: 'prefix', uri: 'ui://app/docs' },
    { match: 'exact', uri: 'ui://app/one.html' },
  ]);

  it('a resource URI: canonicalized, prefix on a path-segment boundary, exact entries exact', () => {
    expect(uriAllowed(docs, 'UI://APP/docs/a.txt')).toBe(true);
    expect(uriAllowed(docs, 'ui://app/docs')).toBe(true);
    expect(uriAllowed(docs, 'ui://app/docs-archive/a.txt')).toBe(false);
    expect(uriAllowed(docs, 'ui://app/one.html')).toBe(true);
    expect(uriAllowed(docs, 'ui://app/two.html')).toBe(false);
    expect(uriAllowed(docs, 'not a uri')).toBe(false);
  });

  it('a template: its literal part, cut back to the last "/", must be inside a prefix entry', () => {
    expect(templateAllowed(docs, 'ui://app/docs/{id}')).toBe(true);
    expect(templateAllowed(docs, 'ui://app/docs/big/{bytes}')).toBe(true);
    // `docs-{x}` may expand outside `docs/`: its literal part cut back is `ui://app/`.
    expect(templateAllowed(docs, 'ui://app/docs-{x}')).toBe(false);
    expect(templateAllowed(docs, 'ui://app/docs-archive/{x}')).toBe(false);
    expect(templateAllowed(docs, 'ui://app/{path}')).toBe(false);
    // An exact entry admits only a template without variables equal to it.
    expect(templateAllowed(docs, 'ui://app/one.html')).toBe(true);
    expect(templateAllowed(docs, 'ui://app/one.html{?q}')).toBe(false);
  });

  it('a bare-scheme prefix (`ui://`) admits every resource and template of its scheme, and nothing else', () => {
    const scheme = profileWith([{ match: 'prefix', uri: 'ui://' }]);
    expect(uriAllowed(scheme, 'ui://any/thing')).toBe(true);
    expect(templateAllowed(scheme, 'ui://{host}/x')).toBe(true);
    expect(templateAllowed(scheme, 'file:///{path}')).toBe(false);
    expect(uriAllowed(scheme, 'https://example.com/')).toBe(false);
  });
});
