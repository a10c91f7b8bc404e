import type { Logger } from '@apphost/runtime';
import type { ViewRpcNotificationMethod } from '@apphost/contracts';
import type { StoredView, ViewRecords } from '../views/view-records';
import type { ViewTeardown } from '../views/view-teardown';
import { LogBudget } from './log-budget';
import type { NotificationPort, ViewContext } from './ports';
import { checkParams } from './rpc-schemas';

type Method = Exclude<ViewRpcNotificationMethod, 'notifications/cancelled'>;

/** Lines a View may add to this replica's log per minute: app log messages, and everything else it notifies. */
const APP_LOG_LINES_PER_MINUTE = 60;
const UI_EVENT_LINES_PER_MINUTE = 30;
/** How much of an app log message's `data` (as JSON text) and `logger` a line keeps. */
const MAX_DATA_CHARS = 2048;
const MAX_LOGGER_CHARS = 128;
/** Compare-and-set attempts on the View record before giving up (each loss means another change landed). */
const MAX_ATTEMPTS = 8;

/** MCP logging levels (RFC 5424) onto the service's log levels. */
const LEVEL_OF: Readonly<Record<string, 'debug' | 'info' | 'warn' | 'error'>> = {
  debug: 'debug',
  info: 'info',
  notice: 'info',
  warning: 'warn',
  error: 'error',
  critical: 'error',
  alert: 'error',
  emergency: 'error',
};

/**
 * The notifications a View sends (all but `notifications/cancelled`, which the in-flight registry owns). None is
 * answered and none fails the View: whatever cannot be acted on is ignored with a log line.
 * - `ui/notifications/initialized`, `ui/notifications/size-changed`: a debug line, nothing durable.
 * - `notifications/message`: one app audit log line (`audience: "app_audit"`), its data cut to a bound.
 * Both kinds are rate-bounded per View (in this replica): past the budget lines are dropped and counted.
 * - `ui/notifications/request-teardown`: recorded on the View (`teardownRequestedAt`, once), then decided by the
 *   profile's `callbackPolicy.requestTeardown`: `accept` ends the View (TORN_DOWN); `host-page` leaves it to the
 *   host page, which reads `teardownRequestedAt` from `get-view` and closes the View if it agrees.
 */
export class ViewNotifications implements NotificationPort {
  private readonly appLog: LogBudget;
  private readonly uiEvents: LogBudget;

  constructor(
    private readonly records: ViewRecords,
    private readonly teardown: ViewTeardown,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.appLog = new LogBudget('app log', APP_LOG_LINES_PER_MINUTE, logger, now);
    this.uiEvents = new LogBudget('view notifications', UI_EVENT_LINES_PER_MINUTE, logger, now);
  }

  async handle(context: ViewContext, method: Method, params: Record<string, unknown>): Promise<void> {
    const viewId = context.view.record.viewId;
    // The admission checked these already; checked again so that nothing here ever acts on a malformed one.
    const checked = checkParams(method, params);
    if (!checked.ok) {
      this.uiEvents.log(viewId, () => this.logger.warn({ viewId, method, issues: checked.issues }, 'malformed view notification ignored'));
      return;
    }
    switch (method) {
      case 'ui/notifications/initialized':
        return this.uiEvents.log(viewId, () => this.logger.debug({ viewId, method }, 'view initialized'));
      case 'ui/notifications/size-changed': {
        const { width, height } = checked.params;
        return this.uiEvents.log(viewId, () => this.logger.debug({ viewId, method, width, height }, 'view size changed'));
      }
      case 'notifications/message':
        return this.appLog.log(viewId, () => this.appLogLine(context, checked.params));
      case 'ui/notifications/request-teardown':
        return this.requestTeardown(context);
    }
  }

  private appLogLine({ view }: ViewContext, params: Record<string, unknown>): void {
    const level = LEVEL_OF[params['level'] as string] ?? 'info';
    const text = JSON.stringify(params['data']) ?? 'null';
    const truncated = text.length > MAX_DATA_CHARS;
    const appLogger = typeof params['logger'] === 'string' ? params['logger'].slice(0, MAX_LOGGER_CHARS) : null;
    this.logger[level](
      {
        audience: 'app_audit',
        viewId: view.record.viewId,
        widgetId: view.record.widget.widgetId,
        session: view.record.session.sessionId,
        appLevel: params['level'],
        appLogger,
        data: truncated ? text.slice(0, MAX_DATA_CHARS) : text,
        ...(truncated ? { truncated: true, dataChars: text.length } : {}),
      },
      'app log',
    );
  }

  /** Records the request once (compare-and-set, read again on a lost race), then applies the profile's decision. */
  private async requestTeardown({ view, policy }: ViewContext): Promise<void> {
    const { viewId, viewGeneration } = view.record;
    const decision = policy.callbacks.requestTeardown;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const current: StoredView | null = attempt === 0 ? view : await this.records.find(viewId);
      if (!current || current.record.viewGeneration !== viewGeneration || current.record.state !== 'ACTIVE') {
        const state = current?.record.state ?? null;
        this.uiEvents.log(viewId, () => this.logger.info({ viewId, state }, 'request-teardown of a View no longer live: ignored'));
        return;
      }
      if (current.record.teardownRequestedAt) {
        const { teardownRequestedAt } = current.record;
        this.uiEvents.log(viewId, () => this.logger.info({ viewId, teardownRequestedAt }, 'duplicate request-teardown ignored'));
        // Under `accept` a live View with the request recorded is one whose first teardown did not finish: finish it.
        if (decision === 'accept') await this.teardown.end(viewId, 'TORN_DOWN');
        return;
      }
      const marked = await this.records.update(current, { ...current.record, teardownRequestedAt: new Date(this.now()).toISOString() });
      if (!marked) continue;
      this.logger.info({ viewId, session: marked.record.session.sessionId, decision }, 'view requested teardown');
      if (decision === 'accept') await this.teardown.end(viewId, 'TORN_DOWN');
      return;
    }
    this.logger.warn({ viewId }, 'request-teardown not recorded: the View kept changing');
  }
}
