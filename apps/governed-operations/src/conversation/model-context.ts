import { BusClient } from '@apphost/bus';
import {
  AppHostError,
  LifecycleGetSession,
  viewPolicyOf,
  type GovernedGetModelContext,
  type ResponseOf,
  type SessionKey,
  type ViewPolicy,
} from '@apphost/contracts';
import type { Logger } from '@apphost/runtime';
import { describeFailure } from '../tool-batches/batch-plan';
import { revocationOf } from '../views/view-checks';
import type { ViewCollaborators } from '../views/view-collaborators';
import type { ViewRecords } from '../views/view-records';
import type { ViewTeardown } from '../views/view-teardown';
import { contextBlockText, type WidgetContext } from './context-block';

type ModelContextAnswer = ResponseOf<typeof GovernedGetModelContext>;

/** A live View's register, with the policy of the profile it was opened under. */
interface LiveRegister extends WidgetContext {
  policy: ViewPolicy;
}

/**
 * What the model sees of the session's Views on its next turn (`get-model-context`), computed from the Views live
 * NOW, never stored: the session's current incarnation, each View re-checked as `get-view` does (one found revoked
 * is ended here, so its register is dropped), per widget the register with the highest commit sequence (a
 * winner's teardown promotes the next by itself), in commit-sequence order; a register over its profile's
 * per-register cap is left out whole, then whole registers are evicted oldest first until the rest fits the
 * per-session cap. Left-out widgets are listed in `evicted` and in the block's last line. Reading changes nothing.
 */
export class ModelContext {
  constructor(
    private readonly bus: BusClient,
    private readonly records: ViewRecords,
    private readonly peers: ViewCollaborators,
    private readonly teardown: ViewTeardown,
    private readonly logger: Logger,
  ) {}

  async read(session: SessionKey): Promise<ModelContextAnswer> {
    const current = await this.bus.request(LifecycleGetSession, { session });
    if (current.state !== 'ACTIVE') throw new AppHostError('NOT_FOUND', 'no such session');
    const views = await this.records.ofSession(session, current.incarnation);
    const live = (await Promise.all(views.map(({ viewId }) => this.liveRegister(viewId, current.incarnation)))).filter((v) => v !== null);

    const winners = [...winnersByWidget(live).values()].sort((a, b) => a.register.commitSequence - b.register.commitSequence);
    const evicted = new Set<string>();
    const kept: LiveRegister[] = [];
    for (const winner of winners) {
      if (winner.register.bytes > winner.policy.registers.maxRegisterBytes) evicted.add(winner.widgetId);
      else kept.push(winner);
    }
    // Views of one session may come from several profiles: the smallest session budget among them holds.
    const budget = Math.min(...kept.map((w) => w.policy.registers.maxSessionBytes));
    let total = kept.reduce((n, w) => n + w.register.bytes, 0);
    while (total > budget && kept.length > 0) {
      const oldest = kept.shift() as LiveRegister;
      total -= oldest.register.bytes;
      evicted.add(oldest.widgetId);
    }
    const evictedIds = winners.filter((w) => evicted.has(w.widgetId)).map((w) => w.widgetId);
    return {
      block: kept.length + evictedIds.length === 0 ? null : { role: 'user', content: [{ type: 'text', text: contextBlockText(kept, evictedIds) }] },
      registers: kept.map(({ widgetId, viewId, register }) => ({ widgetId, viewId, commitSequence: register.commitSequence, bytes: register.bytes })),
      evicted: evictedIds,
    };
  }

  /** The View's register while the View is live in `incarnation`; a View found revoked is ended (its register dropped). */
  private async liveRegister(viewId: string, incarnation: number): Promise<LiveRegister | null> {
    const stored = await this.records.find(viewId);
    const record = stored?.record;
    if (!record || record.incarnation !== incarnation || record.state !== 'ACTIVE' || record.mode !== 'live' || !record.register || !record.profileId)
      return null;
    const reason = await revocationOf(record, null, this.peers, Date.now());
    if (reason) {
      await this.teardown.end(viewId, reason).catch((error: unknown) => {
        this.logger.warn({ viewId, reason, error: describeFailure(error) }, 'model context: ending a revoked view failed (left out all the same)');
      });
      return null;
    }
    const policy = viewPolicyOf(await this.peers.profile(record.profileId));
    return { widgetId: record.widget.widgetId, viewId, register: record.register, policy };
  }
}

/** Per widget, the register with the highest commit sequence (sequences are unique per incarnation: no ties). */
function winnersByWidget(live: readonly LiveRegister[]): Map<string, LiveRegister> {
  const winners = new Map<string, LiveRegister>();
  for (const view of live) {
    const best = winners.get(view.widgetId);
    if (!best || view.register.commitSequence > best.register.commitSequence) winners.set(view.widgetId, view);
  }
  return winners;
}
