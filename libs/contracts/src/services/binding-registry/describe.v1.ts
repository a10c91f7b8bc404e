import { describeContract } from '../../lib/describe';

/** `apphost.binding-registry.describe.v1`: service identity, version, instance and store readiness. */
export const BindingRegistryDescribe = describeContract('binding-registry');
