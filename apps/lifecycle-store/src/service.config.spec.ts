import { describeServiceConfig, variablesOf } from '@apphost/testing';
import { lifecycleConfigSchema } from './config';
import { lifecycleStoreService } from './service';

/** A bad value of each of the service's own variables. */
const BAD: Record<string, string> = {
  LIFECYCLE_CASCADE_PARTICIPANTS: 'not a service!',
  LIFECYCLE_CASCADE_TIMEOUT_MS: '0',
  LIFECYCLE_CREATING_LEASE_MS: '-5',
  LIFECYCLE_MESSAGE_RETENTION_MS: '10',
  LIFECYCLE_RECOVER_ON_START: 'maybe',
};

it('covers every variable of the service schema', () => {
  expect(Object.keys(BAD).sort()).toEqual(variablesOf(lifecycleConfigSchema));
});

describeServiceConfig(lifecycleStoreService, 'apps/lifecycle-store/src/main.ts', BAD);
