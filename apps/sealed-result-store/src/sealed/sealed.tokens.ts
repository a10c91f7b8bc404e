export const SEALED_STORE = Symbol('SEALED_STORE');
export const SEALED_CONFIG = Symbol('SEALED_CONFIG');
