export const SERVICE_CONTEXT = Symbol('SERVICE_CONTEXT');
export const SERVICE_STORES = Symbol('SERVICE_STORES');
export const ROUTED_SERVICES = Symbol('ROUTED_SERVICES');
