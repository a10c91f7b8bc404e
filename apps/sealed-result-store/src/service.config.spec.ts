import { describeServiceConfig, variablesOf } from '@apphost/testing';
import { sealedConfig } from './sealed/sealed.config';
import { sealedResultStoreService } from './service';

/** A bad value of each of the service's own variables. */
const BAD: Record<string, string> = {
  SEALED_MAX_BYTES: '10',
  SEALED_MAX_DEPTH: '1',
  SEALED_PENDING_TTL_MS: '-1',
  SEALED_UPLOAD_TTL_MS: '5',
  SEALED_GC_INTERVAL_MS: 'often',
  SEALED_GC_BATCH: '0',
  SEALED_RECOVER_AFTER_MS: '-5',
  SEALED_LEDGER_TIMEOUT_MS: '1',
};

it('covers every variable of the service schema', () => {
  expect(Object.keys(BAD).sort()).toEqual(variablesOf(sealedConfig));
});

describeServiceConfig(sealedResultStoreService, 'apps/sealed-result-store/src/main.ts', BAD);
