export const BATCH_CONFIG = Symbol('BATCH_CONFIG');
export const BATCH_LOGGER = Symbol('BATCH_LOGGER');
export const CONFIRMATION_STORE = Symbol('CONFIRMATION_STORE');

/** Crash points of the batch pipeline (armed only by tests, through `FAULT_POINTS`). */
export type BatchFaultPoint = 'batch.before-append';
