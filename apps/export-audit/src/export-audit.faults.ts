/**
 * export-audit's crash points, provided as `FaultPoints<ExportAuditFaultPoint>` under `FAULT_POINTS` and armed only by
 * tests (a thrown `InjectedFault` models the process dying there; a latch holds a race open).
 * - `export.before-audit-append`: target verified and resolved, no row written yet.
 * - `export.inside-audit-append`: the authorized row's write fails (an audit-store outage).
 * - `export.after-audit-append`: the row is `authorized`, nothing released.
 * - `export.before-recheck`: after the store load and the audit row, before the recheck (races land here).
 * - `export.after-release`: the row is `released`, the reply not yet sent.
 */
export type ExportAuditFaultPoint =
  'export.before-audit-append' | 'export.inside-audit-append' | 'export.after-audit-append' | 'export.before-recheck' | 'export.after-release';
