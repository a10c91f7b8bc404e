export const BUS_OPTIONS = Symbol('BUS_OPTIONS');
