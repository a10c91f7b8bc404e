import type { BusClient } from '@apphost/bus';
import { AppHostError, GovernedCloseView, type OpenViewAnswer, type OpenViewResponse, type ViewCaller } from '@apphost/contracts';
import { appDocumentHtmlOf } from '@apphost/policy';

/**
 * The View as the host page gets it. A large document governed-operations answered by reference (its UTF-8 bytes,
 * held by the connection owner) is fetched here, length and SHA-256 checked, and decoded, so only the owner and
 * this edge ever carry it. The View is live by then and its grant known only to this answer: when the document
 * cannot be had, the View is closed before the error is answered (a close that fails too leaves a View whose grant
 * nobody holds; its lease ends it).
 */
export async function inlineDocument(bus: BusClient, answer: OpenViewAnswer, caller: ViewCaller): Promise<OpenViewResponse> {
  if (answer.mode !== 'live') return answer;
  const { document } = answer;
  if (!('htmlReference' in document)) return { ...answer, document };
  const { htmlReference, ...rest } = document;
  let html: string | null;
  try {
    // The owner held the UTF-8 bytes of a well-formed text: bytes that are not UTF-8 are corruption.
    html = appDocumentHtmlOf(await bus.fetchReference(htmlReference, { timeoutMs: 'until-deadline' }));
    if (html === null) throw new AppHostError('DATA_LOSS', `the document of View ${answer.viewId} arrived as bytes that are not UTF-8`);
  } catch (error) {
    await bus.request(GovernedCloseView, { caller, viewId: answer.viewId }).catch(() => undefined);
    throw error;
  }
  return { ...answer, document: { ...rest, html } };
}
