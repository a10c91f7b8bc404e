/**
 * The sandbox proxy (MCP Apps "sandbox proxy"), served on the sandbox origin with the View's CSP as an HTTP header.
 * It tells the host page it is ready (`ui/notifications/sandbox-proxy-ready`), takes the View's document once from
 * `ui/notifications/sandbox-resource-ready`, renders it in an inner `srcdoc` iframe (which inherits this document's
 * CSP, so the browser enforces it on the View) and relays every other message both ways, checking source and origin
 * of each: the host page's window and origin (the `host` parameter the server checked), the inner frame's window
 * and this origin. It holds nothing secret: the grant stays with the host page.
 */
const PROXY_READY = 'ui/notifications/sandbox-proxy-ready';
const RESOURCE_READY = 'ui/notifications/sandbox-resource-ready';
/** The View runs scripts on this origin; no forms (the CSP has `form-action 'none'`), popups, or top navigation. */
const INNER_SANDBOX = 'allow-scripts allow-same-origin';
const PERMISSION_FEATURES: Record<string, string> = {
  camera: 'camera',
  microphone: 'microphone',
  geolocation: 'geolocation',
  clipboardWrite: 'clipboard-write',
};

interface ResourceReadyParams {
  html?: unknown;
  permissions?: unknown;
}

function start(): void {
  const hostOrigin = new URLSearchParams(location.search).get('host');
  if (window.parent === window || !hostOrigin) {
    document.body.textContent = 'This page renders MCP App Views inside AppHost’s host page only.';
    return;
  }
  let inner: HTMLIFrameElement | undefined;

  window.addEventListener('message', (event: MessageEvent) => {
    if (event.source === window.parent) {
      if (event.origin !== hostOrigin) return;
      const message = event.data as { method?: unknown; params?: ResourceReadyParams } | null;
      if (message && message.method === RESOURCE_READY) {
        // Once: a second document would be a new View in an old frame.
        if (!inner && typeof message.params?.html === 'string') inner = render(message.params.html, allowOf(message.params.permissions));
        return;
      }
      inner?.contentWindow?.postMessage(event.data, location.origin);
      return;
    }
    if (inner && event.source === inner.contentWindow) {
      if (event.origin !== location.origin) return;
      const method = (event.data as { method?: unknown } | null)?.method;
      // The View cannot speak for the proxy.
      if (method === PROXY_READY || method === RESOURCE_READY) return;
      window.parent.postMessage(event.data, hostOrigin);
    }
  });
  window.parent.postMessage({ jsonrpc: '2.0', method: PROXY_READY, params: {} }, hostOrigin);
}

function render(html: string, allow: string): HTMLIFrameElement {
  const frame = document.createElement('iframe');
  frame.setAttribute('sandbox', INNER_SANDBOX);
  if (allow) frame.setAttribute('allow', allow);
  frame.title = 'MCP App View';
  frame.srcdoc = html;
  document.body.appendChild(frame);
  return frame;
}

/** `_meta.ui.permissions` as an `allow` attribute; the outer frame's `allow` (from the bootstrap) bounds it anyway. */
function allowOf(permissions: unknown): string {
  if (!permissions || typeof permissions !== 'object') return '';
  return Object.keys(permissions)
    .filter((key) => key in PERMISSION_FEATURES && (permissions as Record<string, unknown>)[key] !== undefined)
    .map((key) => PERMISSION_FEATURES[key])
    .join('; ');
}

start();
