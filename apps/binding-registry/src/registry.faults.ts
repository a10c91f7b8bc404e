/**
 * binding-registry's crash points, provided as `FaultPoints<RegistryFaultPoint>` under `FAULT_POINTS` and armed
 * only by tests.
 * - `binding.after-begin-materialize`: this replica won the MATERIALIZING compare-and-set, nothing constructed yet.
 * - `binding.before-finish-revoke`: the binding's connections are closed, the CLOSED state not yet written.
 * - `generation.after-claim`: the generation's directory row is claimed, the connection not yet opened.
 */
export type RegistryFaultPoint = 'binding.after-begin-materialize' | 'binding.before-finish-revoke' | 'generation.after-claim';
