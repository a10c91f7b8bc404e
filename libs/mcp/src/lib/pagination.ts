import { AppHostError, ConnectionReasons, type ConnectionReason } from '@apphost/contracts';

/** Bounds of one discovery walk: any violation denies the whole listing (no partial catalog). */
export interface DiscoveryBounds {
  maxPages: number;
  maxItems: number;
  /** Total serialized bytes of all pages (one page over it is also a violation). */
  maxBytes: number;
  /** Wall time of the whole walk. */
  maxTimeMs: number;
}

export const DEFAULT_DISCOVERY_BOUNDS: DiscoveryBounds = { maxPages: 32, maxItems: 2000, maxBytes: 4 * 1024 * 1024, maxTimeMs: 15_000 };

export interface Page<T> {
  items: T[];
  nextCursor?: string;
}

export interface Walked<T> {
  items: T[];
  pages: number;
  bytes: number;
}

const deny = (reason: ConnectionReason, message: string, details: Record<string, unknown> = {}) =>
  new AppHostError(reason === 'DISCOVERY_TIMEOUT' ? 'DEADLINE_EXCEEDED' : 'RESOURCE_EXHAUSTED', message, {
    retryable: false,
    details: ConnectionReasons.details(reason, details),
  });

/**
 * Walks a paginated list within `bounds`. `fetchPage` gets the cursor and the time left (its own request
 * timeout must not exceed it) and returns the page plus its serialized size. A cursor seen before is a loop:
 * denied, like every other violation.
 */
export async function walkPages<T>(
  fetchPage: (cursor: string | undefined, remainingMs: number) => Promise<{ page: Page<T>; bytes: number }>,
  bounds: DiscoveryBounds,
): Promise<Walked<T>> {
  const deadline = Date.now() + bounds.maxTimeMs;
  const seen = new Set<string>();
  const items: T[] = [];
  let cursor: string | undefined;
  let pages = 0;
  let bytes = 0;
  for (;;) {
    if (pages >= bounds.maxPages) throw deny('DISCOVERY_TOO_MANY_PAGES', `listing needs more than ${bounds.maxPages} pages`, { maxPages: bounds.maxPages });
    const remaining = deadline - Date.now();
    if (remaining <= 0) throw deny('DISCOVERY_TIMEOUT', `listing exceeded ${bounds.maxTimeMs} ms`, { maxTimeMs: bounds.maxTimeMs });
    let fetched: { page: Page<T>; bytes: number };
    try {
      fetched = await fetchPage(cursor, remaining);
    } catch (error) {
      if (Date.now() >= deadline) throw deny('DISCOVERY_TIMEOUT', `listing exceeded ${bounds.maxTimeMs} ms`, { maxTimeMs: bounds.maxTimeMs });
      throw error;
    }
    pages++;
    bytes += fetched.bytes;
    if (bytes > bounds.maxBytes) throw deny('DISCOVERY_TOO_MANY_BYTES', `listing exceeds ${bounds.maxBytes} bytes`, { maxBytes: bounds.maxBytes });
    items.push(...fetched.page.items);
    if (items.length > bounds.maxItems) throw deny('DISCOVERY_TOO_MANY_ITEMS', `listing exceeds ${bounds.maxItems} items`, { maxItems: bounds.maxItems });
    if (Date.now() > deadline) throw deny('DISCOVERY_TIMEOUT', `listing exceeded ${bounds.maxTimeMs} ms`, { maxTimeMs: bounds.maxTimeMs });
    const next = fetched.page.nextCursor;
    if (next === undefined || next === null || next === '') return { items, pages, bytes };
    if (seen.has(next) || next === cursor) throw deny('DISCOVERY_REPEATED_CURSOR', 'the server repeated a pagination cursor', { page: pages });
    seen.add(next);
    cursor = next;
  }
}
