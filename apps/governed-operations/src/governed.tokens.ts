export const BATCH_CONFIG = Symbol('BATCH_CONFIG');
export const BATCH_LOGGER = Symbol('BATCH_LOGGER');
export const CONFIRMATION_STORE = Symbol('CONFIRMATION_STORE');
/** The View RPC's ports (`view-rpc/ports.ts` `ViewRpcPorts`). */
export const VIEW_RPC_PORTS = Symbol('VIEW_RPC_PORTS');
