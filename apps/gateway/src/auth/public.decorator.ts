/**
 * One "public route" marker for the whole plane: the runtime's ops controller (probes, metrics) uses it, and
 * the gateway's auth guard honours it. Only for probes and documents anyone may read.
 */
export { Public, IS_PUBLIC as IS_PUBLIC_KEY } from '@apphost/runtime';
