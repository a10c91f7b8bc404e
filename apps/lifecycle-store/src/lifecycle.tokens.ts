/** The service's database, for handlers that build their own small repositories over it. */
export const LIFECYCLE_DATABASE = Symbol('LIFECYCLE_DATABASE');
