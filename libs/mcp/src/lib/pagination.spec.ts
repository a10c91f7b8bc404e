import fc from 'fast-check';
import { AppHostError } from '@apphost/contracts';
import { walkPages, type DiscoveryBounds, type Page } from './pagination';
import { typedRejection } from './test-targets';

const bounds: DiscoveryBounds = { maxPages: 5, maxItems: 10, maxBytes: 1000, maxTimeMs: 1000 };

function pages(list: Page<number>[]) {
  return async (cursor: string | undefined) => {
    const index = cursor === undefined ? 0 : Number(cursor);
    return { page: list[index], bytes: 10 };
  };
}

async function reasonOf(p: Promise<unknown>): Promise<string> {
  return String((await typedRejection(p)).details?.['reason']);
}

describe('walkPages', () => {
  it('aggregates every page in order', async () => {
    const walked = await walkPages(pages([{ items: [1, 2], nextCursor: '1' }, { items: [3], nextCursor: '2' }, { items: [4] }]), bounds);
    expect(walked).toEqual({ items: [1, 2, 3, 4], pages: 3, bytes: 30 });
  });

  it('denies a repeated cursor, too many pages, items or bytes, and a slow walk — never a partial list', async () => {
    expect(
      await reasonOf(
        walkPages(
          pages([
            { items: [1], nextCursor: '1' },
            { items: [2], nextCursor: '1' },
          ]),
          bounds,
        ),
      ),
    ).toBe('DISCOVERY_REPEATED_CURSOR');
    const endless = async (cursor: string | undefined) => ({ page: { items: [], nextCursor: String(Number(cursor ?? 0) + 1) }, bytes: 1 });
    expect(await reasonOf(walkPages(endless, bounds))).toBe('DISCOVERY_TOO_MANY_PAGES');
    expect(await reasonOf(walkPages(pages([{ items: Array.from({ length: 11 }, (_, i) => i) }]), bounds))).toBe('DISCOVERY_TOO_MANY_ITEMS');
    expect(await reasonOf(walkPages(async () => ({ page: { items: [1] }, bytes: 1001 }), bounds))).toBe('DISCOVERY_TOO_MANY_BYTES');
    const slow = async () => {
      await new Promise((r) => setTimeout(r, 60));
      return { page: { items: [1] }, bytes: 1 };
    };
    expect(await reasonOf(walkPages(slow, { ...bounds, maxTimeMs: 30 }))).toBe('DISCOVERY_TIMEOUT');
  });

  it('either returns every item of a well-formed listing or a typed denial (property)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(fc.integer(), { maxLength: 6 }), { minLength: 1, maxLength: 8 }), async (chunks) => {
        const list = chunks.map((items, i) => ({ items, nextCursor: i < chunks.length - 1 ? String(i + 1) : undefined }));
        const total = chunks.flat().length;
        const outcome = await walkPages(pages(list), bounds).then(
          (w) => w,
          (e: unknown) => e,
        );
        if (chunks.length <= bounds.maxPages && total <= bounds.maxItems)
          expect(outcome).toEqual({ items: chunks.flat(), pages: chunks.length, bytes: 10 * chunks.length });
        else expect(outcome).toBeInstanceOf(AppHostError);
      }),
    );
  });
});
