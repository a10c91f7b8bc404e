/**
 * lifecycle-store's crash points, provided as `FaultPoints<LifecycleFaultPoint>` under `FAULT_POINTS` and armed only
 * by tests: a thrown `InjectedFault` models the process dying at that instant; a latch action holds a race open.
 */
export type LifecycleFaultPoint =
  | 'create.before-reservation'
  | 'create.after-reservation'
  | 'create.before-import-finalization'
  | 'create.after-import-finalization'
  | 'create.before-session-commit'
  | 'create.inside-session-commit'
  | 'create.after-session-commit'
  | 'create.after-activation'
  | 'delete.after-deleting'
  | 'delete.before-revoke'
  | 'delete.after-revoke'
  | 'delete.before-session-purge'
  | 'delete.after-session-purge'
  | 'delete.before-purge'
  | 'delete.after-purge'
  | 'delete.before-deleted'
  | 'delete.after-deleted';
