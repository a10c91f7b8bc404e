/**
 * sealed-result-store's crash-relevant instants, provided as `FaultPoints<SealedFaultPoint>` under `FAULT_POINTS`
 * and armed only by tests (unarmed: one Map lookup each).
 * - `create.after-store-write`: the record row is durable, the reply not yet sent (orphan on crash).
 * - `commit.before-write`: the commit request arrived; nothing written yet (crash before commit).
 * - `commit.after-write`: the record is COMMITTED, the reply not yet sent (late commit / lost reply).
 * - `resolve.before-release`: the digest verified, the bytes not yet released.
 * - `chunk.after-write`: a staged chunk is durable, the reply not yet sent.
 * - `gc.before-delete`: the ledger has answered and its references are committed; the guarded delete is next.
 */
export type SealedFaultPoint =
  'create.after-store-write' | 'commit.before-write' | 'commit.after-write' | 'resolve.before-release' | 'chunk.after-write' | 'gc.before-delete';
