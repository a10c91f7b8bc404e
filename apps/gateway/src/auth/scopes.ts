/**
 * The scopes the gateway's routes check (a token's `scope`/`scp` claim). A principal holds only what it was given:
 * `admin` (profiles, toolsets, keys, principal revocation), `runtime` (sessions, catalog, tool batches, view tokens),
 * `view` (a browser rendering Views), `delegate` (with `runtime`: act for another user of the tenant by naming
 * `userId`), `export` and `audit` (exports and their audit rows).
 */
export const SCOPES = {
  admin: 'admin',
  runtime: 'runtime',
  view: 'view',
  delegate: 'delegate',
  export: 'export',
  audit: 'audit',
} as const;

export type Scope = (typeof SCOPES)[keyof typeof SCOPES];

/** Every scope, as the development token carries them. */
export const ALL_SCOPES: readonly Scope[] = Object.values(SCOPES);
