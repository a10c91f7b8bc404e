import { describeContract } from '../../lib/describe';

/** `apphost.governed-operations.describe.v1`: service identity, version, instance and store readiness. */
export const GovernedOperationsDescribe = describeContract('governed-operations');
