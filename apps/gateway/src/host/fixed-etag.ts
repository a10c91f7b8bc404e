import { createHash } from 'node:crypto';

/**
 * A strong ETag for a file that never changes while the process runs (the host page's and the sandbox's): computed
 * once from its content, so a `no-cache` revalidation answers 304 instead of the file again.
 */
export function fixedEtagOf(content: string): string {
  return `"${createHash('sha256').update(content).digest('base64url').slice(0, 27)}"`;
}
