export { openServiceDatabase, DEFAULT_PING_TIMEOUT_MS, type ServiceDatabase, type StoreIdentity } from './lib/service-database';
export { DatabaseConnectionError, connectionFailureOf, isConnectionFailure, type Database, type Queryable, type QueryResult } from './lib/query-api';
export type { OpenServiceDatabaseOptions, MigrationClass, EntityTarget, PersistenceLogger } from './lib/options';
export { STORE_IDENTITY_MIGRATION } from './lib/store-identity.migration';
export { advisoryLockKey } from './lib/advisory-lock';
export { redactUrl, redactText } from '@apphost/redact';
export { startEmbeddedPostgres, embeddedPasswordFile, EMBEDDED_DATABASE, type EmbeddedPostgres, type EmbeddedPostgresOptions } from './lib/embedded-postgres';
export { ChannelListener } from './lib/channel-listener';
export { ChannelWaiters } from './lib/channel-waiters';
