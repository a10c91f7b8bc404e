export const BATCH_CONFIG = Symbol('BATCH_CONFIG');
export const BATCH_LOGGER = Symbol('BATCH_LOGGER');
export const CONFIRMATION_STORE = Symbol('CONFIRMATION_STORE');
