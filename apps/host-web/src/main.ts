import { ApiClient, ApiError } from './api';
import { el } from './dom';
import { takeTokenFromHash, TOKEN_KEY } from './token';
import { WidgetView, type WidgetTarget } from './widget';

interface HostConfig {
  sandboxOrigin: string;
  apps: string[];
}
interface SessionSummary {
  sessionId: string;
  appName: string;
  state: string;
  createdAt?: string;
}
interface CatalogTool {
  name: string;
  toolsetId: string;
  description?: string;
  inputSchema?: Record<string, unknown>;
  resourceUri?: string;
}
interface PublicEvent {
  id: number;
  author: string;
  /** `app_audit` for a View operation's audit event (listed only with "app audit events" on). */
  audience?: string;
  content?: Record<string, unknown>;
  customMetadata?: Record<string, unknown>;
  timestamp: string;
  functionCalls?: { id: string; name: string; args?: Record<string, unknown> }[];
  functionResponses?: { id: string; name: string; response?: Record<string, unknown> }[];
  widgets?: Array<{ resourceUri: string; correlation?: { functionCallId: string }; tool?: string }>;
}
interface PendingMessage {
  messageId: string;
  state: string;
  widgetId: string;
  content: { type: string; text?: string }[];
}
interface ModelContext {
  block: { content: { text: string }[] } | null;
  evicted: string[];
}
interface BatchReply {
  eventId: number;
  confirmations: { confirmationId: string; functionCallId: string; tool: string }[];
}

const $ = (id: string) => {
  const node = document.getElementById(id);
  if (!node) throw new Error(`the page has no #${id}`);
  return node;
};

/**
 * The reference host page: sign in with the token from the link `npm start` prints (`#token=`, kept in session
 * storage), choose an app and a session (or create one), call a catalog tool as the model would (a one-call tool
 * batch), and see the session's events with their widgets rendered as Views.
 */
class HostPage {
  private readonly widgets = new Map<string, WidgetView>();
  private appName = '';
  private sessionId = '';
  /** Events appended by this page's own calls: their widgets open at once. */
  private readonly openOnArrival = new Set<number>();
  /** The user's actions run one after another, so a click never races a half-loaded app or session. */
  private queue: Promise<void> = Promise.resolve();
  /** How many actions are queued or running. */
  private actions = 0;

  constructor(
    private readonly api: ApiClient,
    private readonly config: HostConfig,
  ) {}

  async start(): Promise<void> {
    const apps = $('apps') as HTMLDataListElement;
    apps.replaceChildren(...this.config.apps.map((name) => el('option', { value: name })));
    const appInput = $('app') as HTMLInputElement;
    appInput.value = new URLSearchParams(location.hash.slice(1)).get('app') ?? this.config.apps[0] ?? '';
    appInput.addEventListener('change', () => this.run(() => this.chooseApp(appInput.value.trim())));
    ($('session') as HTMLSelectElement).addEventListener('change', (e) => this.run(() => this.chooseSession((e.target as HTMLSelectElement).value)));
    $('new-session').addEventListener('click', () => this.run(() => this.createSession()));
    $('delete-session').addEventListener('click', () => this.run(() => this.deleteSession()));
    $('refresh-events').addEventListener('click', () => this.run(() => this.guard(() => this.loadEvents())));
    $('show-audit').addEventListener('change', () => this.run(() => this.guard(() => this.loadEvents())));
    // A View's ui/update-model-context or ui/message was accepted: the conversation panels catch up.
    document.addEventListener('apphost:conversation', () => this.run(() => this.guard(() => this.loadConversation())));
    $('sign-out').addEventListener('click', () => {
      sessionStorage.removeItem(TOKEN_KEY);
      location.reload();
    });
    $('signed-in').hidden = false;
    if (appInput.value) this.run(() => this.chooseApp(appInput.value.trim()));
    await this.queue;
  }

  /**
   * Queues one user action; `data-busy` on the body says whether any is queued or running (tests and styles read it):
   * it clears when the last one ends, not when the first of several queued ones does.
   */
  private run(action: () => Promise<void>): void {
    this.actions++;
    document.body.dataset['busy'] = 'true';
    this.queue = this.queue.then(action).finally(() => {
      if (--this.actions === 0) document.body.dataset['busy'] = 'false';
    });
  }

  private async chooseApp(appName: string): Promise<void> {
    this.appName = appName;
    document.body.dataset['app'] = appName;
    delete document.body.dataset['session'];
    this.closeAll('another app was chosen');
    if (!appName) return;
    await this.guard(async () => {
      const { sessions } = await this.api.get<{ sessions: SessionSummary[] }>(`/v1/sessions?appName=${encodeURIComponent(appName)}`);
      const select = $('session') as HTMLSelectElement;
      select.replaceChildren(
        el('option', { value: '', textContent: sessions.length ? 'choose a session…' : 'no sessions yet' }),
        ...sessions.map((s) => el('option', { value: s.sessionId, textContent: `${s.sessionId}${s.state === 'ACTIVE' ? '' : ` (${s.state})`}` })),
      );
      const latest = sessions.find((s) => s.state === 'ACTIVE');
      if (latest) {
        select.value = latest.sessionId;
        await this.chooseSession(latest.sessionId);
      } else this.showSession(false);
    });
  }

  private async createSession(): Promise<void> {
    if (!this.appName) return this.error('Choose an app first.');
    await this.guard(async () => {
      const { body } = await this.api.post<SessionSummary>('/v1/sessions', { appName: this.appName });
      await this.chooseApp(this.appName);
      ($('session') as HTMLSelectElement).value = body.sessionId;
      await this.chooseSession(body.sessionId);
    });
  }

  private async deleteSession(): Promise<void> {
    if (!this.sessionId || !window.confirm(`Delete session ${this.sessionId}? Its Views close and its events go.`)) return;
    await this.guard(async () => {
      await this.api.call('DELETE', `/v1/sessions/${encodeURIComponent(this.sessionId)}?appName=${encodeURIComponent(this.appName)}`);
      await this.chooseApp(this.appName);
    });
  }

  private async chooseSession(sessionId: string): Promise<void> {
    this.closeAll('another session was chosen');
    this.sessionId = sessionId;
    this.showSession(!!sessionId);
    if (!sessionId) return;
    await this.guard(() => Promise.all([this.loadCatalog(), this.loadEvents()]).then(() => undefined));
    document.body.dataset['session'] = sessionId;
  }

  private showSession(shown: boolean): void {
    $('workspace').hidden = !shown;
  }

  private query(): string {
    return `appName=${encodeURIComponent(this.appName)}`;
  }

  private async loadCatalog(): Promise<void> {
    const catalog = await this.api.get<{ tools: CatalogTool[]; unavailable: { toolsetId: string; reason: string }[] }>(
      `/v1/sessions/${encodeURIComponent(this.sessionId)}/catalog?${this.query()}`,
    );
    const list = $('tools');
    list.replaceChildren(
      ...catalog.tools.map((tool) => this.toolCard(tool)),
      ...catalog.unavailable.map((u) => el('p', { className: 'error', textContent: `Toolset ${u.toolsetId} is unavailable (${u.reason}).` })),
    );
    if (catalog.tools.length === 0) list.append(el('p', { textContent: 'The model catalog of this app is empty.' }));
  }

  private toolCard(tool: CatalogTool): HTMLElement {
    const args = el('textarea', { rows: 2, spellcheck: false, value: '{}' });
    args.setAttribute('aria-label', `arguments of ${tool.name}`);
    const call = el('button', { textContent: 'Call as the model' });
    const card = el('article', { className: 'tool' }, [
      el('h3', { textContent: tool.name }),
      el('p', { className: 'meta', textContent: `${tool.toolsetId}${tool.resourceUri ? ` · ${tool.resourceUri}` : ''}` }),
      el('p', { textContent: tool.description ?? '' }),
      args,
      call,
    ]);
    card.dataset['tool'] = tool.name;
    call.addEventListener('click', () => this.run(() => this.callAsModel(tool.name, args.value)));
    return card;
  }

  /** A one-call tool batch, as the model's turn would send it; its widget opens when the event arrives. */
  private async callAsModel(tool: string, rawArgs: string): Promise<void> {
    let args: unknown;
    try {
      args = JSON.parse(rawArgs || '{}');
    } catch {
      return this.error(`The arguments of ${tool} are not JSON.`);
    }
    if (!args || typeof args !== 'object' || Array.isArray(args)) return this.error(`The arguments of ${tool} must be a JSON object.`);
    const suffix = crypto.randomUUID().slice(0, 8);
    await this.guard(async () => {
      const { body } = await this.api.post<BatchReply>(`/v1/sessions/${encodeURIComponent(this.sessionId)}/tool-batches`, {
        appName: this.appName,
        invocationId: `host-${suffix}`,
        calls: [{ functionCallId: `call-${suffix}`, tool, arguments: args }],
      });
      this.openOnArrival.add(body.eventId);
      for (const confirmation of body.confirmations) this.askConfirmation(confirmation);
      await this.loadEvents();
    });
  }

  private askConfirmation(c: BatchReply['confirmations'][number]): void {
    const box = el('div', { className: 'confirmation' }, [el('p', { textContent: `${c.tool} waits for your confirmation.` })]);
    for (const confirmed of [true, false]) {
      const button = el('button', { textContent: confirmed ? 'Approve' : 'Decline' });
      button.addEventListener('click', () =>
        this.run(() =>
          this.guard(async () => {
            const { body } = await this.api.post<{ eventId: number }>(`/v1/sessions/${encodeURIComponent(this.sessionId)}/confirmations/${c.confirmationId}`, {
              appName: this.appName,
              confirmed,
            });
            box.remove();
            if (confirmed && body?.eventId) this.openOnArrival.add(body.eventId);
            await this.loadEvents();
          }),
        ),
      );
      box.append(button);
    }
    $('confirmations').append(box);
  }

  private async loadEvents(): Promise<void> {
    // App audit events never reach a model; the page shows them only when asked (`audience=all`).
    const audience = ($('show-audit') as HTMLInputElement).checked ? '&audience=all' : '';
    const page = await this.api.get<{ events: PublicEvent[] }>(
      `/v1/sessions/${encodeURIComponent(this.sessionId)}/events?${this.query()}&limit=200${audience}`,
    );
    const list = $('events');
    const seen = new Set<string>();
    const cards = page.events.map((event) => this.eventCard(event, seen));
    list.replaceChildren(...cards);
    if (cards.length === 0) list.append(el('p', { textContent: 'No events yet: call a tool as the model.' }));
    // Views of widgets no longer listed (a deleted session) close.
    for (const [key, widget] of this.widgets) if (!seen.has(key)) void widget.teardown('its event is gone').then(() => this.widgets.delete(key));
    await this.loadConversation();
  }

  /** Beside the widgets: the model-context block the model sees next turn, and the messages waiting for a turn. */
  private async loadConversation(): Promise<void> {
    if (!this.sessionId) return;
    const session = `/v1/sessions/${encodeURIComponent(this.sessionId)}`;
    const [context, ...lists] = await Promise.all([
      this.api.get<ModelContext>(`${session}/model-context?${this.query()}`),
      ...['ACCEPTED', 'CLAIMED'].map((state) => this.api.get<{ messages: PendingMessage[] }>(`${session}/messages?${this.query()}&state=${state}`)),
    ]);
    $('model-context').textContent = context.block?.content.map((c) => c.text).join('\n') ?? 'empty';
    $('evicted').textContent = context.evicted.length ? `Evicted: ${context.evicted.join(', ')}` : '';
    const messages = lists.flatMap((list) => list.messages);
    $('messages').replaceChildren(
      ...messages.map((m) => {
        const text = m.content.map((c) => c.text ?? `[${c.type}]`).join(' ');
        const card = el('article', { className: 'message' }, [
          el('p', { className: 'meta', textContent: `${m.state} · ${m.widgetId}` }),
          el('p', { textContent: text }),
        ]);
        card.dataset['state'] = m.state;
        return card;
      }),
    );
    if (messages.length === 0) $('messages').append(el('p', { textContent: 'none' }));
  }

  private eventCard(event: PublicEvent, seen: Set<string>): HTMLElement {
    const lines = [
      ...(event.functionCalls ?? []).map((c) => el('p', { className: 'call', textContent: `→ ${c.name}(${JSON.stringify(c.args ?? {})})` })),
      ...(event.functionResponses ?? []).map((r) => el('p', { className: 'response', textContent: `← ${r.name}: ${summary(r.response)}` })),
    ];
    // An app audit event's story is its record (customMetadata), not calls or responses: it is shown as such.
    const audit = event.audience === 'app_audit';
    if (audit) lines.unshift(el('p', { className: 'record', textContent: auditInWords(event.customMetadata?.[APP_AUDIT_KEY]) }));
    const card = el('article', { className: audit ? 'event audit' : 'event' }, [
      el('h3', { textContent: `#${event.id} · ${event.author} · ${new Date(event.timestamp).toLocaleTimeString()}` }),
      ...lines,
    ]);
    card.dataset['eventId'] = String(event.id);
    if (audit) return card;
    for (const widget of event.widgets ?? []) {
      // A descriptor names its call; a legacy widget names its tool, answered by one of the event's responses.
      const responses = event.functionResponses ?? [];
      const functionCallId = widget.correlation?.functionCallId ?? (responses.find((r) => r.name === widget.tool) ?? responses[0])?.id;
      if (!functionCallId) continue;
      const key = `${event.id}:${functionCallId}`;
      seen.add(key);
      const existing = this.widgets.get(key);
      if (existing) {
        card.append(existing.root);
        continue;
      }
      const target: WidgetTarget = { appName: this.appName, sessionId: this.sessionId, eventId: event.id, functionCallId };
      if (this.openOnArrival.delete(event.id)) card.append(this.openWidget(key, target).root);
      else {
        const open = el('button', { textContent: `Open View of ${widget.resourceUri}` });
        open.addEventListener('click', () => open.replaceWith(this.openWidget(key, target).root));
        card.append(open);
      }
    }
    return card;
  }

  private openWidget(key: string, target: WidgetTarget): WidgetView {
    // A refresh or rerun answered a new event: the list is reloaded as a queued action, so it never interleaves with
    // another (a new session chosen meanwhile) and a failure is shown like any other.
    const widget = new WidgetView(this.api, this.config.sandboxOrigin, target, (eventId) => {
      this.openOnArrival.delete(eventId);
      this.run(() => this.guard(() => this.loadEvents()));
    });
    this.widgets.set(key, widget);
    void widget.open();
    return widget;
  }

  private closeAll(why: string): void {
    for (const widget of this.widgets.values()) void widget.teardown(why);
    this.widgets.clear();
    $('events').replaceChildren();
    $('tools').replaceChildren();
    $('confirmations').replaceChildren();
    $('model-context').textContent = 'empty';
    $('evicted').textContent = '';
    $('messages').replaceChildren();
  }

  private async guard(action: () => Promise<void>): Promise<void> {
    $('error').textContent = '';
    try {
      await action();
    } catch (error) {
      this.error(error instanceof ApiError || error instanceof Error ? error.message : String(error));
    }
  }

  private error(text: string): void {
    $('error').textContent = text;
  }
}

/** `customMetadata` key of an app audit event's record (`APP_AUDIT_METADATA_KEY` of the contracts). */
const APP_AUDIT_KEY = 'io.apphost/app-audit';

/** An app audit record in one line: the View operation (method, tool or URI), its decision and outcome. */
function auditInWords(record: unknown): string {
  if (!record || typeof record !== 'object') return 'app audit event';
  const r = record as Record<string, unknown>;
  if (r['kind'] === 'summary') return `app audit summary of View ${String(r['viewId'])}: ${JSON.stringify(r)}`;
  const what = (r['tool'] ?? r['uri'] ?? '') as string;
  const outcome = [r['outcome'], r['reason']].filter((part) => typeof part === 'string' && part !== '').join(' · ');
  const replayed = r['replayed'] === true ? ' (replayed)' : '';
  const duration = typeof r['durationMs'] === 'number' ? ` in ${r['durationMs']} ms` : '';
  return `View ${String(r['method'])} ${what}: ${String(r['decision'])}${outcome ? `, ${outcome}` : ''}${replayed}${duration}`;
}

function summary(response: Record<string, unknown> | undefined): string {
  const text = JSON.stringify(response ?? {});
  return text.length > 240 ? `${text.slice(0, 240)}…` : text;
}

async function main(): Promise<void> {
  const { token, rest } = takeTokenFromHash(location.hash);
  if (token) {
    sessionStorage.setItem(TOKEN_KEY, token);
    // The token leaves the address bar and the history entry at once.
    history.replaceState(null, '', `${location.pathname}${location.search}${rest}`);
  }
  const stored = sessionStorage.getItem(TOKEN_KEY);
  const form = $('sign-in') as HTMLFormElement;
  if (!stored) {
    form.hidden = false;
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const value = (($('token') as HTMLInputElement).value ?? '').trim();
      if (value) {
        sessionStorage.setItem(TOKEN_KEY, value);
        location.reload();
      }
    });
    return;
  }
  const config = (await (await fetch('/host/config.json', { cache: 'no-store' })).json()) as HostConfig;
  await new HostPage(new ApiClient(stored), config).start();
}

void main().catch((error: unknown) => {
  const target = document.getElementById('error');
  if (target) target.textContent = error instanceof Error ? error.message : String(error);
});
