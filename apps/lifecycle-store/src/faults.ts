import { FaultPoints } from '@apphost/runtime';

/**
 * Crash points compiled into the lifecycle code paths (armed only by tests): a thrown `InjectedFault` models the
 * process dying at that instant; a latch action holds a race open.
 */
export const LIFECYCLE_FAULT_POINTS = [
  'create.before-reservation',
  'create.after-reservation',
  'create.before-import-finalization',
  'create.after-import-finalization',
  'create.before-session-commit',
  'create.inside-session-commit',
  'create.after-session-commit',
  'create.after-activation',
  'delete.after-deleting',
  'delete.before-revoke',
  'delete.after-revoke',
  'delete.before-session-purge',
  'delete.after-session-purge',
  'delete.before-purge',
  'delete.after-purge',
  'delete.before-deleted',
  'delete.after-deleted',
] as const;
export type LifecycleFaultPoint = (typeof LIFECYCLE_FAULT_POINTS)[number];

/** The service instance's fault points; tests reach it with `app.get(LifecycleFaults)`. */
export class LifecycleFaults extends FaultPoints<LifecycleFaultPoint> {}
