import { isUtf8 } from 'node:buffer';
import type { BusClient } from '@apphost/bus';
import { AppHostError, GovernedCloseView, type OpenViewAnswer, type OpenViewResponse, type ViewCaller } from '@apphost/contracts';
import { jsonStringLiteralOfUtf8 } from '../http/json-literal';
import { spliceMarker, type JsonSplice } from '../http/spliced-json';

/** The View as the host page gets it; with `splice`, its document's `html` is the marker of the literal to send. */
export interface RenderedView {
  view: OpenViewResponse;
  splice?: JsonSplice;
}

/**
 * A large document governed-operations answered by reference (its UTF-8 bytes, held by the connection owner) is
 * fetched here, length and SHA-256 checked, and checked to be UTF-8; it is then sent as the JSON literal of those
 * bytes (never decoded into a string), so only the owner and this edge ever carry it. The View is live by then and
 * its grant known only to this answer: when the document cannot be had, the View is closed before the error is
 * answered (a close that fails too leaves a View whose grant nobody holds; its lease ends it).
 */
export async function renderDocument(bus: BusClient, answer: OpenViewAnswer, caller: ViewCaller): Promise<RenderedView> {
  if (answer.mode !== 'live') return { view: answer };
  const { document } = answer;
  if (!('htmlReference' in document)) return { view: { ...answer, document } };
  const { htmlReference, ...rest } = document;
  let literal: Buffer;
  try {
    const bytes = await bus.fetchReference(htmlReference, { timeoutMs: 'until-deadline' });
    // The owner held the UTF-8 bytes of a well-formed text: bytes that are not UTF-8 are corruption.
    if (!isUtf8(bytes)) throw new AppHostError('DATA_LOSS', `the document of View ${answer.viewId} arrived as bytes that are not UTF-8`);
    literal = jsonStringLiteralOfUtf8(bytes);
  } catch (error) {
    await bus.request(GovernedCloseView, { caller, viewId: answer.viewId }).catch(() => undefined);
    throw error;
  }
  const marker = spliceMarker();
  return { view: { ...answer, document: { ...rest, html: marker } }, splice: { marker, literal } };
}
