import { describeContract } from '../../lib/describe';

/** `apphost.catalog-policy.describe.v1`: service identity, version, instance and store readiness. */
export const CatalogPolicyDescribe = describeContract('catalog-policy');
