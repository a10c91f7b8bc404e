import { AppBridge, PostMessageTransport } from '@modelcontextprotocol/ext-apps/app-bridge';
import { ProtocolError } from '@modelcontextprotocol/client';
import { ApiError, type ApiClient } from './api';
import { el } from './dom';

/** The widget an event carries, as the page names it to the bootstrap. */
export interface WidgetTarget {
  appName: string;
  sessionId: string;
  eventId: number;
  functionCallId: string;
}

/** The parts of a live bootstrap the page uses (`POST /v1/views`, mode `live`). */
interface LiveView {
  mode: 'live';
  viewId: string;
  expiresAt: string;
  grant: string;
  document: { html: string; meta: Record<string, unknown> };
  toolInput: { arguments: Record<string, unknown> };
  toolResult: Record<string, unknown>;
  hostCapabilities: Record<string, unknown>;
  hostContext: Record<string, unknown>;
  csp: { header: string };
  allow: string;
}

interface PlaceholderView {
  mode: 'placeholder';
  viewId: string;
  reason: string;
  actions: { kind: 'refresh' | 'rerun'; label: string; warning: string | null }[];
}

type OpenView = LiveView | PlaceholderView;

const PLACEHOLDER_WORDS: Record<string, string> = {
  LEGACY_WIDGET: 'This widget comes from a toolset without a host profile: it has no live View.',
  SEALED_RESULT_MISSING: 'The result this widget showed is no longer kept.',
  SEALED_RESULT_CORRUPT: 'The result this widget showed failed its integrity check.',
  GENERATION_GONE: 'The server connection that produced this widget has ended.',
  TOOLSET_REVOKED: 'The toolset of this widget was revoked.',
};

/** How long a View gets to acknowledge `ui/resource-teardown` before the page closes it anyway. */
const TEARDOWN_ACK_MS = 3000;
const MIN_HEIGHT = 60;
const MAX_HEIGHT = 2000;

let rpcCounter = 0;

/**
 * One widget rendered as a View: the bootstrap, then the sandbox iframe on the sandbox origin, the View's document
 * delivered through the sandbox proxy, `ui/initialize` answered with the bootstrap's capabilities and context, and
 * only after `initialized` the tool input (once) and the tool result. Every View request is relayed to
 * `POST /v1/views/{id}/rpc` with the grant, which stays here: the iframe never holds it. Read-only placeholders
 * show their refresh / "Run tool again" action. The lease is renewed while the page is visible.
 */
export class WidgetView {
  readonly root: HTMLElement;
  private readonly body: HTMLElement;
  private readonly status: HTMLElement;
  private bridge: AppBridge | undefined;
  private frame: HTMLIFrameElement | undefined;
  private view: LiveView | undefined;
  private renewTimer: number | undefined;
  private closed = false;
  private readonly cleanups: Array<() => void> = [];

  constructor(
    private readonly api: ApiClient,
    private readonly sandboxOrigin: string,
    private target: WidgetTarget,
    private readonly onReplay: (eventId: number) => void,
  ) {
    this.status = el('p', { className: 'widget-status' });
    this.body = el('div', { className: 'widget-body' });
    const close = el('button', { className: 'widget-close', textContent: 'Close View', title: 'Tear the View down and close it' });
    close.addEventListener('click', () => void this.teardown('closed from the page'));
    this.root = el('section', { className: 'widget' }, [
      el('header', {}, [el('span', { className: 'widget-title', textContent: `widget ${target.eventId}:${target.functionCallId}` }), close]),
      this.status,
      this.body,
    ]);
    this.root.dataset['widget'] = `${target.eventId}:${target.functionCallId}`;
  }

  async open(): Promise<void> {
    this.say('Opening the View…');
    try {
      const { body } = await this.api.post<OpenView>('/v1/views', { ...this.target, hostContext: hostContextOfPage() });
      // Closed while the bootstrap ran: the new View is closed at once instead of rendered.
      if (this.closed) return void (await this.api.call('DELETE', `/v1/views/${body.viewId}`).catch(() => undefined));
      if (body.mode === 'live') await this.renderLive(body);
      else this.renderPlaceholder(body);
    } catch (error) {
      this.fail(error);
    }
  }

  /** Host-initiated teardown: `ui/resource-teardown` (bounded wait for the acknowledgement), then `DELETE`. */
  async teardown(why: string): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.say(`Closing the View (${why})…`);
    if (this.bridge) await this.bridge.teardownResource({}, { timeout: TEARDOWN_ACK_MS }).catch(() => undefined);
    const viewId = this.view?.viewId;
    this.dispose();
    if (viewId) await this.api.call('DELETE', `/v1/views/${viewId}`).catch((error: unknown) => this.fail(error));
    this.root.dataset['state'] = 'closed';
    this.say(`View closed (${why}).`);
  }

  private async renderLive(view: LiveView): Promise<void> {
    this.view = view;
    this.root.dataset['viewId'] = view.viewId;
    const frame = document.createElement('iframe');
    frame.setAttribute('sandbox', 'allow-scripts allow-same-origin');
    if (view.allow) frame.setAttribute('allow', view.allow);
    frame.referrerPolicy = 'no-referrer';
    frame.title = `View of ${this.target.functionCallId}`;
    frame.style.height = `${MIN_HEIGHT * 5}px`;
    const query = new URLSearchParams({ host: location.origin, csp: view.csp.header });
    frame.src = `${this.sandboxOrigin}/sandbox/proxy?${query.toString()}`;
    this.body.replaceChildren(frame);
    this.frame = frame;
    const contentWindow = frame.contentWindow;
    if (!contentWindow) throw new Error('the sandbox frame has no window');

    // PostMessageTransport checks the source window; this checks the origin too, ahead of it.
    const originGuard = (event: MessageEvent) => {
      if (event.source === contentWindow && event.origin !== this.sandboxOrigin) event.stopImmediatePropagation();
    };
    window.addEventListener('message', originGuard, true);
    this.cleanups.push(() => window.removeEventListener('message', originGuard, true));

    const bridge = new AppBridge(null, { name: 'apphost-reference-host', version: '1' }, view.hostCapabilities, {
      hostContext: view.hostContext,
    });
    this.bridge = bridge;
    let documentSent = false;
    bridge.onsandboxready = () => {
      if (documentSent) return void this.teardown('the sandbox reloaded itself');
      documentSent = true;
      const meta = view.document.meta;
      void bridge.sendSandboxResourceReady({ html: view.document.html, permissions: meta['permissions'] as never, csp: meta['csp'] as never });
    };
    let initialized = false;
    bridge.oninitialized = () => {
      if (initialized) return;
      initialized = true;
      this.notify('ui/notifications/initialized', {});
      void bridge.sendToolInput({ arguments: view.toolInput.arguments }).then(() => bridge.sendToolResult(view.toolResult as never));
      this.root.dataset['state'] = 'live';
      this.say('Live.');
    };
    bridge.oncalltool = (params, extra) => this.relay('tools/call', params, extra) as never;
    bridge.onreadresource = (params, extra) => this.relay('resources/read', params, extra) as never;
    bridge.onlistresources = (params, extra) => this.relay('resources/list', params, extra) as never;
    bridge.onlistresourcetemplates = (params, extra) => this.relay('resources/templates/list', params, extra) as never;
    // The conversation hooks the profile advertises (`updateModelContext`, `message`) are governed RPC requests too.
    bridge.onupdatemodelcontext = (params, extra) => this.conversation(this.relay('ui/update-model-context', params, extra)) as never;
    // A user message under the profile's `confirm` policy (the default): the user is asked, and the relay says so.
    bridge.onmessage = (params, extra) => {
      const text = params.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join(' ');
      if (!window.confirm(`The View of ${this.target.functionCallId} sends this message to the conversation:\n\n${text}`))
        return Promise.reject(new ProtocolError(-32603, 'the user declined the message')) as never;
      return this.conversation(this.relay('ui/message', params, extra, { 'X-AppHost-User-Attested': 'message' })) as never;
    };
    bridge.onsizechange = (size) => {
      if (typeof size.height === 'number') frame.style.height = `${Math.min(MAX_HEIGHT, Math.max(MIN_HEIGHT, Math.ceil(size.height)))}px`;
      this.notify('ui/notifications/size-changed', size);
    };
    bridge.onloggingmessage = (params) => this.notify('notifications/message', params);
    bridge.onrequestteardown = (params) => {
      // Recorded by AppHost; the host's decision here is to honour it.
      this.notify('ui/notifications/request-teardown', params ?? {});
      void this.teardown('the View asked to close');
    };
    await bridge.connect(new PostMessageTransport(contentWindow, contentWindow));
    this.scheduleRenewal(view.expiresAt);
  }

  private renderPlaceholder(view: PlaceholderView): void {
    this.root.dataset['state'] = 'placeholder';
    const words = PLACEHOLDER_WORDS[view.reason] ?? `This widget cannot be shown live (${view.reason}).`;
    const actions = view.actions.map((action) => {
      const button = el('button', { textContent: action.label || (action.kind === 'refresh' ? 'Refresh' : 'Run tool again') });
      button.dataset['action'] = action.kind;
      button.addEventListener('click', () => {
        if (action.warning && !window.confirm(action.warning)) return;
        void this.replay(view.viewId, action.kind);
      });
      return el('div', { className: 'action' }, [button, ...(action.warning ? [el('small', { textContent: action.warning })] : [])]);
    });
    this.body.replaceChildren(el('div', { className: 'placeholder' }, [el('p', { textContent: words }), ...actions]));
    this.say('Read-only.');
  }

  private async replay(viewId: string, action: 'refresh' | 'rerun'): Promise<void> {
    this.say(action === 'refresh' ? 'Refreshing…' : 'Running the tool again…');
    try {
      const { body } = await this.api.post<{ event: { id: number }; view: OpenView }>(`/v1/views/${viewId}:${action}`, { hostContext: hostContextOfPage() });
      this.target = { ...this.target, eventId: body.event.id };
      this.onReplay(body.event.id);
      if (body.view.mode === 'live') await this.renderLive(body.view);
      else this.renderPlaceholder(body.view);
    } catch (error) {
      this.fail(error);
    }
  }

  /** One View request to the governed RPC route; the JSON-RPC error (with AppHost's `data.code`) goes back to the View. */
  private async relay(
    method: string,
    params: unknown,
    extra: { mcpReq: { id: string | number; signal: AbortSignal } },
    headers: Record<string, string> = {},
  ): Promise<unknown> {
    const view = this.liveView();
    const id = extra.mcpReq.id ?? `host-${++rpcCounter}`;
    const onAbort = () => this.notify('notifications/cancelled', { requestId: id, reason: 'cancelled by the View' });
    extra.mcpReq.signal.addEventListener('abort', onAbort, { once: true });
    try {
      const reply = await this.api.post<{ result?: unknown; error?: { code: number; message: string; data?: unknown } }>(
        `/v1/views/${view.viewId}/rpc`,
        { jsonrpc: '2.0', id, method, params },
        { 'X-AppHost-View-Grant': view.grant, ...headers },
      );
      if (reply.status === 204) throw new ProtocolError(-32800, 'request cancelled');
      if (reply.body.error) throw new ProtocolError(reply.body.error.code, reply.body.error.message, reply.body.error.data);
      return reply.body.result;
    } catch (error) {
      if (error instanceof ApiError) {
        this.fail(error);
        throw new ProtocolError(-32603, error.message, { code: error.code, reason: error.reason });
      }
      throw error;
    } finally {
      extra.mcpReq.signal.removeEventListener('abort', onAbort);
    }
  }

  /** Once a conversation request is answered, the page's conversation panels refresh. */
  private async conversation(reply: Promise<unknown>): Promise<unknown> {
    const result = await reply;
    document.dispatchEvent(new CustomEvent('apphost:conversation'));
    return result;
  }

  /** A View notification to the governed RPC route (202, no body); a failure is shown, never sent to the View. */
  private notify(method: string, params: unknown): void {
    const view = this.view;
    if (!view || this.closed) return;
    this.api
      .post(`/v1/views/${view.viewId}/rpc`, { jsonrpc: '2.0', method, params }, { 'X-AppHost-View-Grant': view.grant })
      .catch((error: unknown) => this.note(error));
  }

  /** Renews the lease at half its remaining time, while the page is visible; a hidden page lets it lapse. */
  private scheduleRenewal(expiresAt: string): void {
    const remaining = Date.parse(expiresAt) - Date.now();
    const delay = Math.max(1000, Math.floor(remaining / 2));
    this.renewTimer = window.setTimeout(() => void this.renew(), delay);
  }

  private async renew(): Promise<void> {
    const view = this.view;
    if (!view || this.closed) return;
    if (document.visibilityState !== 'visible') {
      document.addEventListener('visibilitychange', () => void this.renew(), { once: true });
      return;
    }
    try {
      const { body } = await this.api.post<{ expiresAt: string }>(`/v1/views/${view.viewId}:renew`, {}, { 'X-AppHost-View-Grant': view.grant });
      this.scheduleRenewal(body.expiresAt);
    } catch (error) {
      this.fail(error);
      this.dispose();
      this.closed = true;
    }
  }

  private liveView(): LiveView {
    if (!this.view || this.closed) throw new ProtocolError(-32603, 'the View is closed');
    return this.view;
  }

  private dispose(): void {
    window.clearTimeout(this.renewTimer);
    for (const cleanup of this.cleanups.splice(0)) cleanup();
    void this.bridge?.close().catch(() => undefined);
    this.bridge = undefined;
    this.frame?.remove();
    this.frame = undefined;
  }

  private say(text: string): void {
    this.status.textContent = text;
    this.status.classList.remove('error');
  }

  private fail(error: unknown): void {
    this.status.textContent = error instanceof Error ? error.message : String(error);
    this.status.classList.add('error');
    this.root.dataset['error'] = error instanceof ApiError ? (error.reason ?? error.code ?? 'ERROR') : 'ERROR';
  }

  private note(error: unknown): void {
    this.root.dataset['notice'] = error instanceof Error ? error.message : String(error);
  }
}

/** What the page tells the View about its surroundings (MCP Apps `HostContext`). */
function hostContextOfPage(): Record<string, unknown> {
  const dark = window.matchMedia?.('(prefers-color-scheme: dark)').matches;
  return {
    theme: dark ? 'dark' : 'light',
    locale: navigator.language,
    timeZone: Intl.DateTimeFormat().resolvedOptions().timeZone,
    platform: 'web',
    displayMode: 'inline',
    containerDimensions: { maxHeight: MAX_HEIGHT },
  };
}
