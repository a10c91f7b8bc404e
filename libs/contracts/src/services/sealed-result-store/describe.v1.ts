import { describeContract } from '../../lib/describe';

/** `apphost.sealed-result-store.describe.v1`: service identity, version, instance and store readiness. */
export const SealedResultStoreDescribe = describeContract('sealed-result-store');
