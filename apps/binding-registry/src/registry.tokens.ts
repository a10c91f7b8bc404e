export const REGISTRY_CONFIG = Symbol('REGISTRY_CONFIG');
export const REGISTRY_INSTANCE = Symbol('REGISTRY_INSTANCE');

/** This process as an owner of connection generations: its instance id and this run's incarnation. */
export interface RegistryInstance {
  instanceId: string;
  incarnation: string;
}
