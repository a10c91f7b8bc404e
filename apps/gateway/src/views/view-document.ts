import { isUtf8 } from 'node:buffer';
import type { BusClient } from '@apphost/bus';
import { AppHostError, GovernedCloseView, type OpenViewAnswer, type OpenViewResponse, type ViewCaller } from '@apphost/contracts';
import { spliceMarker, type JsonSplice } from '../http/spliced-json';

/** The View as the host page gets it; with `splice`, its document's `html` is the marker of the literal to send. */
export interface RenderedView {
  view: OpenViewResponse;
  splice?: JsonSplice;
}

const QUOTE = 0x22;

/**
 * A large document governed-operations answered by reference (the JSON string literal of its text, held by the
 * connection owner) is fetched here, length and SHA-256 checked, and spliced into the answer as it is: never decoded
 * nor escaped again, and only the owner and this edge ever carry it. The View is live by then and its grant known
 * only to this answer: when the document cannot be had, the View is closed before the error is answered (a close
 * that fails too leaves a View whose grant nobody holds; its lease ends it).
 */
export async function renderDocument(bus: BusClient, answer: OpenViewAnswer, caller: ViewCaller): Promise<RenderedView> {
  if (answer.mode !== 'live') return { view: answer };
  const { document } = answer;
  if (!('htmlLiteralReference' in document)) return { view: { ...answer, document } };
  const { htmlLiteralReference, ...rest } = document;
  let literal: Uint8Array;
  try {
    literal = await bus.fetchReference(htmlLiteralReference, { timeoutMs: 'until-deadline' });
    // The owner checked the literal when it held it (one JSON string, valid UTF-8): anything else arrived corrupt.
    if (literal.length < 2 || literal[0] !== QUOTE || literal[literal.length - 1] !== QUOTE || !isUtf8(literal))
      throw new AppHostError('DATA_LOSS', `the document of View ${answer.viewId} arrived as bytes that are not a JSON string of UTF-8`);
  } catch (error) {
    await bus.request(GovernedCloseView, { caller, viewId: answer.viewId }).catch(() => undefined);
    throw error;
  }
  const marker = spliceMarker();
  return { view: { ...answer, document: { ...rest, html: marker } }, splice: { marker, literal } };
}
