export const CATALOG_CONFIG = Symbol('CATALOG_CONFIG');
export const CATALOG_LOGGER = Symbol('CATALOG_LOGGER');
