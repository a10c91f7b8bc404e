import { describeContract } from '../../lib/describe';

/** `apphost.lifecycle-store.describe.v1`: service identity, version, instance and store readiness. */
export const LifecycleStoreDescribe = describeContract('lifecycle-store');
