import { describeServiceConfig, variablesOf } from '@apphost/testing';
import { batchConfig } from './governed.config';
import { governedOperationsService } from './service';

/** A bad value of each of the service's own variables. */
const BAD: Record<string, string> = {
  GOVERNED_CLASSIFY_TIMEOUT_MS: '0',
  GOVERNED_CALL_TIMEOUT_MS: 'soon',
  GOVERNED_STORE_TIMEOUT_MS: '700000',
  GOVERNED_SEAL_PENDING_TTL_MS: '-1',
  GOVERNED_CONFIRMATION_TTL_MS: '10',
  GOVERNED_CONFIRMATION_RETENTION_MS: 'forever',
  GOVERNED_DUPLICATE_IN_FLIGHT: 'retry',
  GOVERNED_CALL_CLAIM_TTL_MS: '10',
  GOVERNED_OWNER_HEARTBEAT_MS: '50',
  GOVERNED_VIEW_DEVELOPMENT: 'yes',
  GOVERNED_VIEW_PRODUCER_TTL_MS: '1000',
  GOVERNED_VIEW_READ_TIMEOUT_MS: '0',
  GOVERNED_VIEW_CLOSED_RETENTION_MS: '10',
  GOVERNED_VIEW_SWEEP_MS: '-5',
  GOVERNED_MESSAGE_PER_VIEW_PER_MINUTE: '0',
  GOVERNED_MESSAGE_MAX_BYTES: '100000',
  GOVERNED_MESSAGE_ACCEPT_WITHIN_MS: '10',
};

it('covers every variable of the service schema', () => {
  expect(Object.keys(BAD).sort()).toEqual(variablesOf(batchConfig));
});

describeServiceConfig(governedOperationsService, 'apps/governed-operations/src/main.ts', BAD);
