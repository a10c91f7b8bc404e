import { describeServiceConfig, variablesOf } from '@apphost/testing';
import { catalogConfig } from './catalog.config';
import { catalogPolicyService } from './service';

/** A bad value of each of the service's own variables. */
const BAD: Record<string, string> = {
  CATALOG_MODEL_CACHE_TTL_MS: '-1',
  CATALOG_MODEL_CACHE_MAX_ENTRIES: '0',
  CATALOG_APP_TOOLSETS: '{"demo":1}',
  CATALOG_REGISTRY_TIMEOUT_MS: '5',
  CATALOG_MAX_TOOLS: '0',
};

/** Free-form: any string is a valid value. */
const FREE_FORM = ['CATALOG_RESERVED_NAMES'];

it('covers every variable of the service schema', () => {
  expect([...Object.keys(BAD), ...FREE_FORM].sort()).toEqual(variablesOf(catalogConfig));
});

describeServiceConfig(catalogPolicyService, 'apps/catalog-policy/src/main.ts', BAD);
