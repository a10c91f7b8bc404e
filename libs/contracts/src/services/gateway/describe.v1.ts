import { describeContract } from '../../lib/describe';

/** `apphost.gateway.describe.v1`: service identity, version, instance and store readiness. */
export const GatewayDescribe = describeContract('gateway');
