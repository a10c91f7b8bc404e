export const REGISTRY_CONFIG = Symbol('REGISTRY_CONFIG');
export const REGISTRY_INSTANCE = Symbol('REGISTRY_INSTANCE');
/** The `Clock` (from `@apphost/mcp`) of idle eviction, maximum lifetimes and multi-round flow deadlines. */
export const REGISTRY_CLOCK = Symbol('REGISTRY_CLOCK');

/** This process as an owner of connection generations: its instance id and this run's incarnation. */
export interface RegistryInstance {
  instanceId: string;
  incarnation: string;
}
