import { AppHostError, type Principal } from '@apphost/contracts';
import { actingPrincipal, ownSessionKey, viewCallerOf } from './request-input';

const alice: Principal = { tenant: 'acme', subject: 'alice', scopes: ['runtime'] };
const runtime: Principal = { tenant: 'acme', subject: 'svc-runtime', scopes: ['runtime', 'delegate'] };
const viewToken: Principal = { tenant: 'acme', subject: 'alice', scopes: ['view'], restrictedTo: { appName: 'dash', sessionId: 's1', incarnation: 1 } };

function expectNotFound(run: () => unknown): void {
  let thrown: unknown;
  try {
    run();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(AppHostError);
  expect(thrown).toMatchObject({ code: 'NOT_FOUND', message: 'session not found' });
}

describe('ownSessionKey', () => {
  it("is the caller's own session when no user, or its own, is named", () => {
    const own = { tenant: 'acme', appName: 'dash', userId: 'alice', sessionId: 's1' };
    expect(ownSessionKey(alice, 'dash', 's1', undefined)).toEqual(own);
    expect(ownSessionKey(alice, 'dash', 's1', 'alice')).toEqual(own);
  });

  it('reads another user as not found without delegate', () => {
    expectNotFound(() => ownSessionKey(alice, 'dash', 's1', 'bob'));
    expectNotFound(() => ownSessionKey({ ...alice, scopes: ['runtime', 'admin', 'view'] }, 'dash', 's1', 'bob'));
  });

  it('lets a delegate name any user of its own tenant, never another tenant', () => {
    expect(ownSessionKey(runtime, 'dash', 's1', 'bob')).toEqual({ tenant: 'acme', appName: 'dash', userId: 'bob', sessionId: 's1' });
    expect(ownSessionKey(runtime, 'dash', 's1', undefined).userId).toBe('svc-runtime');
  });

  it('lets a view token reach its one session only, as its user only', () => {
    expect(ownSessionKey(viewToken, 'dash', 's1', undefined)).toEqual({ tenant: 'acme', appName: 'dash', userId: 'alice', sessionId: 's1' });
    expect(ownSessionKey(viewToken, 'dash', 's1', 'alice').userId).toBe('alice');
    expectNotFound(() => ownSessionKey(viewToken, 'dash', 's2', undefined));
    expectNotFound(() => ownSessionKey(viewToken, 'other-app', 's1', undefined));
    expectNotFound(() => ownSessionKey(viewToken, 'dash', 's1', 'bob'));
    // Even a restricted principal that somehow held delegate may not name another user.
    expectNotFound(() => ownSessionKey({ ...viewToken, scopes: ['view', 'delegate'] }, 'dash', 's1', 'bob'));
  });
});

describe('viewCallerOf', () => {
  it('applies the same user rule and keeps the verified principal', () => {
    expect(viewCallerOf(alice)).toEqual({ principal: alice, userId: 'alice' });
    expect(viewCallerOf(alice, 'alice')).toEqual({ principal: alice, userId: 'alice' });
    expect(viewCallerOf(runtime, 'bob')).toEqual({ principal: runtime, userId: 'bob' });
    expect(viewCallerOf(viewToken)).toEqual({ principal: viewToken, userId: 'alice' });
    expectNotFound(() => viewCallerOf(alice, 'bob'));
    expectNotFound(() => viewCallerOf(viewToken, 'bob'));
  });
});

describe('actingPrincipal', () => {
  it('is the caller for its own session', () => {
    expect(actingPrincipal(alice, ownSessionKey(alice, 'dash', 's1', undefined))).toBe(alice);
    expect(actingPrincipal(runtime, ownSessionKey(runtime, 'dash', 's1', undefined))).toBe(runtime);
  });

  it('is the named user, without delegate, when a delegate acts for it: the users of one runtime never share a principal', () => {
    const forBob = actingPrincipal(runtime, ownSessionKey(runtime, 'dash', 's1', 'bob'));
    const forCarol = actingPrincipal(runtime, ownSessionKey(runtime, 'dash', 's1', 'carol'));
    expect(forBob).toEqual({ tenant: 'acme', subject: 'bob', scopes: ['runtime'] });
    expect(forCarol).toEqual({ tenant: 'acme', subject: 'carol', scopes: ['runtime'] });
  });
});
