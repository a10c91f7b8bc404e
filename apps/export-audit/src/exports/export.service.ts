import type { BusClient } from '@apphost/bus';
import { canonicalize } from '@apphost/canonical-json';
import {
  AppHostError,
  DEFAULT_EXPORT_POLICY,
  ExportReasons,
  LifecycleGetEvent,
  LifecycleGetSession,
  RegistryGetProfile,
  RegistryGetToolset,
  RegistryVerifyBindingRevision,
  type ErrorCode,
  type ExportPolicy,
  type ExportProjection,
  type ExportReason,
  type ExportRequest,
  type ExportResponse,
  type HostProfile,
  type SealedEnvelope,
  type SessionKey,
  type ToolsetStatus,
} from '@apphost/contracts';
import type { FaultPoints, Logger } from '@apphost/runtime';
import { SealedResultClient } from '@apphost/sealed-results';
import { auditUnavailable, sameTarget, type AttemptRow, type ExportAuditStore, type ExportTarget } from '../audit/export-audit.store';
import type { ExportAuditFaultPoint } from '../export-audit.faults';
import type { ExportPermits, HeldPermit } from './export-permits';

/** A denial: the code the caller gets and the reason recorded on the row. */
class Denial extends Error {
  constructor(
    readonly code: ErrorCode,
    readonly reason: ExportReason,
    message: string,
  ) {
    super(message);
  }
}

const deny = (code: ErrorCode, reason: ExportReason, message: string) => new Denial(code, reason, message);

/** Immutable profiles kept in memory (bounded). */
const PROFILE_CACHE_MAX = 256;

/** The model projection's allowlist (the architecture's "model projection"). */
const MODEL_PROJECTION_KEYS = ['content', 'isError', 'resultType'] as const;

/** Never HTML: a content block carrying an HTML document (embedded resource or link) is dropped from every projection. */
function withoutHtml(content: unknown): unknown {
  if (!Array.isArray(content)) return content;
  return content.filter((block: Record<string, unknown>) => {
    const mime = (block?.mimeType ?? (block?.resource as Record<string, unknown> | undefined)?.mimeType) as unknown;
    return !(typeof mime === 'string' && mime.toLowerCase().startsWith('text/html'));
  });
}

/** The released bytes of one projection: JSON values only, never HTML, never a grant or template. */
export function project(result: SealedEnvelope['result'], projection: ExportProjection): unknown {
  if (projection === 'structured') return result.structuredContent ?? null;
  if (projection === 'full') return { ...result, content: withoutHtml(result.content) };
  const out: Record<string, unknown> = {};
  for (const key of MODEL_PROJECTION_KEYS) if ((result as Record<string, unknown>)[key] !== undefined) out[key] = (result as Record<string, unknown>)[key];
  out.content = withoutHtml(out.content);
  return out;
}

/** Awaits every promise, then rethrows the first failure in list order (not in time order). */
async function settledInOrder<T extends readonly unknown[]>(promises: { [K in keyof T]: Promise<T[K]> }): Promise<T> {
  const settled = await Promise.allSettled(promises as readonly Promise<unknown>[]);
  for (const outcome of settled) if (outcome.status === 'rejected') throw outcome.reason;
  return settled.map((outcome) => (outcome as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

export interface ExportDeps {
  store: ExportAuditStore;
  permits: ExportPermits;
  bus: BusClient;
  faults: FaultPoints<ExportAuditFaultPoint>;
  logger: Logger;
  timeoutMs: number;
  now?: () => number;
}

interface Binding {
  status: ToolsetStatus;
  keyActive: boolean;
  policy: ExportPolicy;
}

/**
 * The export flow (README "Export"): authorize the purpose, hold an incarnation-bound permit, verify the target against
 * the ledger and resolve the sealed record, write the `authorized` row (committed), recheck everything immediately
 * before release, take the permit, mark `released`, answer. Every denial is recorded when the store is up; an audit
 * write that fails answers AUDIT_UNAVAILABLE and releases nothing.
 */
export class ExportService {
  private readonly sealed: SealedResultClient;
  private readonly profiles = new Map<string, HostProfile>();

  constructor(private readonly deps: ExportDeps) {
    this.sealed = new SealedResultClient(deps.bus, { timeoutMs: deps.timeoutMs });
  }

  async export(req: ExportRequest): Promise<ExportResponse> {
    const { store } = this.deps;
    const target: ExportTarget = { session: req.session, eventId: req.eventId, functionCallId: req.functionCallId, projection: req.projection };
    const digest = store.principalDigest(req.principal);
    const tenant = req.session.tenant;
    // 1. The export purpose for this principal: its own tenant and its own session, with the export scope.
    if (req.principal.tenant !== tenant || req.principal.subject !== req.session.userId) throw new AppHostError('NOT_FOUND', 'export target not found');

    let row = await store.load(tenant, req.operationId).catch((error: unknown) => {
      throw auditUnavailable(error);
    });
    if (row) this.sameOperation(row, target, digest);

    let permit: HeldPermit | null = null;
    let incarnation = 0;
    try {
      if (!req.principal.scopes.includes('export')) throw deny('PERMISSION_DENIED', 'PURPOSE_NOT_AUTHORIZED', 'the export scope is required');
      // 2. The incarnation-bound permit, held until release.
      incarnation = await this.currentIncarnation(req.session);
      if (row?.incarnation != null && row.incarnation !== incarnation)
        throw deny('FAILED_PRECONDITION', 'STALE_INCARNATION', 'the session was recreated since this export was authorized');
      permit = await this.deps.permits.acquire(req.session, incarnation, req.operationId);
      if (!permit) throw deny('NOT_FOUND', 'PERMIT_REVOKED', 'the session is being deleted');

      // 3. Tenant, session, incarnation, event and function call against the ledger; then the sealed record.
      const event = await this.request(() =>
        this.deps.bus.request(
          LifecycleGetEvent,
          { session: req.session, incarnation, eventId: req.eventId, functionCallId: req.functionCallId },
          { timeoutMs: this.deps.timeoutMs },
        ),
      );
      // The ledger also answers calls it holds no sealed result for (Views render legacy widgets): nothing to export.
      if (!event.sealedResultRef) throw deny('NOT_FOUND', 'TARGET_NOT_FOUND', 'export target not found');
      if (!event.toolsetId || !event.bindingRevision)
        throw deny('FAILED_PRECONDITION', 'NOT_PROFILE_BOUND', 'only profile-bound sealed results can be exported');
      const recordKey = {
        session: req.session,
        incarnation,
        eventId: String(req.eventId),
        functionCallId: req.functionCallId,
        recordId: event.sealedResultRef.recordId,
      };
      const [loaded, resolved] = await settledInOrder([
        this.binding(event.toolsetId, event.bindingRevision),
        this.request(() => this.sealed.resolve(recordKey)),
      ]);
      if (!loaded.policy.projections.includes(req.projection))
        throw deny('PERMISSION_DENIED', 'PROJECTION_NOT_ALLOWED', `the profile does not allow the ${req.projection} projection`);
      const result = project(resolved.envelope.result, req.projection);
      const bytes = Buffer.byteLength(canonicalize(result as never), 'utf8');
      if (bytes > loaded.policy.maxBytes)
        throw deny('PAYLOAD_TOO_LARGE', 'EXPORT_TOO_LARGE', `the export is ${bytes} bytes; the profile allows ${loaded.policy.maxBytes}`);

      // 4. The authorized row, committed before anything is released.
      await this.deps.faults.hit('export.before-audit-append');
      row = await this.authorize(row, req, target, digest, { incarnation, recordId: event.sealedResultRef.recordId, toolsetId: event.toolsetId, bytes });
      await this.deps.faults.hit('export.after-audit-append');

      // 5. The recheck, immediately before release: anything that changed denies.
      await this.deps.faults.hit('export.before-recheck');
      await this.recheck(req, incarnation, digest, event.toolsetId, event.bindingRevision, loaded, bytes);
      const taken = await this.deps.permits.take(req.session, incarnation, permit);
      permit = null;
      if (!taken) throw deny('NOT_FOUND', 'PERMIT_REVOKED', 'the session was deleted during the export');

      // 6. Released: an attempt record (not proof of delivery), then one materialized answer.
      const released = await store.release(tenant, req.operationId).catch((error: unknown) => {
        throw auditUnavailable(error);
      });
      if (!released) throw new AppHostError('FAILED_PRECONDITION', 'the export was denied', { details: ExportReasons.details('EXPORT_DENIED') });
      await this.deps.faults.hit('export.after-release');
      this.deps.logger.info({ exportId: released.exportId, releaseCount: released.releaseCount, bytes }, 'export released');
      return { exportId: released.exportId, status: 'released', releaseCount: released.releaseCount, bytes, result };
    } catch (error) {
      if (error instanceof Denial) {
        await this.recordDenial(row, req, target, digest, incarnation, error.reason);
        this.deps.logger.info({ operationId: req.operationId, reason: error.reason }, 'export denied');
        throw new AppHostError(error.code, error.message, { details: ExportReasons.details(error.reason) });
      }
      throw error;
    } finally {
      if (permit) await this.deps.permits.drop(permit).catch(() => undefined);
    }
  }

  /** The same operation id must name the same target, by the same principal; a denied (or failed) attempt is final. */
  private sameOperation(row: AttemptRow, target: ExportTarget, digest: string): void {
    if (!sameTarget(row.target, target) || row.principalDigest !== digest)
      throw new AppHostError('CONFLICT', 'this operation id names another export', { details: ExportReasons.details('OPERATION_REUSED') });
    if (row.status === 'denied' || row.status === 'failed')
      throw new AppHostError('FAILED_PRECONDITION', `this export was ${row.status} (${row.reason ?? 'no reason'}); denial is final`, {
        details: ExportReasons.details('EXPORT_DENIED', { deniedFor: row.reason }),
      });
  }

  private async authorize(
    row: AttemptRow | null,
    req: ExportRequest,
    target: ExportTarget,
    digest: string,
    facts: { incarnation: number; recordId: string; toolsetId: string; bytes: number },
  ): Promise<AttemptRow> {
    try {
      await this.deps.faults.hit('export.inside-audit-append');
      if (row) {
        if (!(await this.deps.store.authorize(req.session.tenant, req.operationId, facts))) this.sameOperation({ ...row, status: 'denied' }, target, digest);
        return row;
      }
      const written = await this.deps.store.insert({
        operationId: req.operationId,
        target,
        principalDigest: digest,
        status: 'authorized',
        reason: null,
        ...facts,
      });
      this.sameOperation(written, target, digest); // another replica won the insert: it must be the same export
      return written;
    } catch (error) {
      if (error instanceof AppHostError && (error.code === 'CONFLICT' || error.code === 'FAILED_PRECONDITION')) throw error;
      throw auditUnavailable(error);
    }
  }

  private async recheck(
    req: ExportRequest,
    incarnation: number,
    digest: string,
    toolsetId: string,
    bindingRevision: string,
    loaded: Binding,
    bytes: number,
  ): Promise<void> {
    if (!req.principal.scopes.includes('export') || this.deps.store.principalDigest(req.principal) !== digest)
      throw deny('PERMISSION_DENIED', 'PRINCIPAL_CHANGED', 'the principal changed');
    const clock = this.deps.now ?? Date.now;
    // In parallel, but judged in a fixed order (session, binding, counts), so a race always denies for the same reason.
    const [current, now, counts] = await settledInOrder([
      this.currentIncarnation(req.session),
      this.binding(toolsetId, bindingRevision),
      this.deps.store
        .counts(req.session, incarnation, digest, new Date(clock() - 60_000), req.operationId)
        .catch((error: unknown) => Promise.reject(auditUnavailable(error))),
    ] as const);
    if (current !== incarnation) throw deny('FAILED_PRECONDITION', 'STALE_INCARNATION', 'the session was recreated');
    if (now.status.bindingGeneration !== loaded.status.bindingGeneration || now.status.bindingRevision !== loaded.status.bindingRevision)
      throw deny('FAILED_PRECONDITION', 'BINDING_CHANGED', 'the toolset was rebound during the export');
    if (loaded.keyActive && !now.keyActive) throw deny('FAILED_PRECONDITION', 'BINDING_KEY_INVALID', 'the binding key was rotated during the export');
    if (!now.policy.projections.includes(req.projection)) throw deny('PERMISSION_DENIED', 'PROJECTION_NOT_ALLOWED', 'the projection is no longer allowed');
    if (bytes > now.policy.maxBytes) throw deny('PAYLOAD_TOO_LARGE', 'EXPORT_TOO_LARGE', 'the export exceeds the profile byte limit');
    if (counts.sessionReleases >= now.policy.bulkCap) throw deny('RESOURCE_EXHAUSTED', 'BULK_CAP_REACHED', 'the session reached its export bulk cap');
    if (counts.principalRecent + 1 > now.policy.perPrincipalPerMinute) throw deny('RESOURCE_EXHAUSTED', 'RATE_LIMITED', 'too many exports this minute');
  }

  private async currentIncarnation(session: SessionKey): Promise<number> {
    const snapshot = await this.request(() => this.deps.bus.request(LifecycleGetSession, { session }, { timeoutMs: this.deps.timeoutMs }));
    if (snapshot.state !== 'ACTIVE')
      throw deny(snapshot.state === 'DELETED' ? 'NOT_FOUND' : 'FAILED_PRECONDITION', 'SESSION_NOT_ACTIVE', 'the session is not active');
    return snapshot.incarnation;
  }

  /** The toolset's binding as the registry has it now: PROFILE_BOUND, the descriptor's revision verifying, and the profile's export policy. */
  private async binding(toolsetId: string, bindingRevision: string): Promise<Binding> {
    const opts = { timeoutMs: this.deps.timeoutMs };
    const verifying = this.deps.bus.request(RegistryVerifyBindingRevision, { toolsetId, bindingRevision }, opts).catch((error: unknown) => {
      if (error instanceof AppHostError && (error.code === 'FAILED_PRECONDITION' || error.code === 'INVALID_ARGUMENT' || error.code === 'NOT_FOUND'))
        throw deny('FAILED_PRECONDITION', 'BINDING_KEY_INVALID', 'the binding key no longer verifies');
      throw error;
    });
    verifying.catch(() => undefined); // awaited below; a status failure must not leave it unhandled
    const status = await this.request(() => this.deps.bus.request(RegistryGetToolset, { toolsetId }, opts));
    if (status.state !== 'PROFILE_BOUND' || !status.profileId) throw deny('FAILED_PRECONDITION', 'NOT_PROFILE_BOUND', 'the toolset is not profile-bound');
    const [verdict, profile] = await Promise.all([verifying, this.profile(status.profileId)]);
    if (!verdict.valid || !verdict.current) throw deny('FAILED_PRECONDITION', 'BINDING_KEY_INVALID', 'the binding revision no longer verifies');
    return { status, keyActive: verdict.active, policy: profile.export ?? DEFAULT_EXPORT_POLICY };
  }

  /**
   * A host profile by id. Profiles are immutable (a change is a new id), so the content is cached; which profile
   * applies is read again from the toolset's status at every load and recheck, so a rebind to another profile wins.
   */
  private async profile(profileId: string): Promise<HostProfile> {
    const cached = this.profiles.get(profileId);
    if (cached) return cached;
    const { profile } = await this.request(() => this.deps.bus.request(RegistryGetProfile, { profileId }, { timeoutMs: this.deps.timeoutMs }));
    if (this.profiles.size >= PROFILE_CACHE_MAX) this.profiles.clear();
    this.profiles.set(profileId, profile);
    return profile;
  }

  /** Maps a target-side refusal to a recorded denial: absent or foreign reads as NOT_FOUND; a digest failure is DATA_LOSS. */
  private async request<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof AppHostError)) throw error;
      if (error.code === 'NOT_FOUND') throw deny('NOT_FOUND', 'TARGET_NOT_FOUND', 'export target not found');
      if (error.code === 'FAILED_PRECONDITION') throw deny('FAILED_PRECONDITION', 'STALE_INCARNATION', 'the session is not in the expected incarnation');
      if (error.code === 'DATA_LOSS') throw deny('DATA_LOSS', 'SEALED_RECORD_UNAVAILABLE', 'the sealed record failed verification');
      throw error;
    }
  }

  /** A denial is recorded whenever the store is up (a store that is down loses the record, never the denial). */
  private async recordDenial(
    row: AttemptRow | null,
    req: ExportRequest,
    target: ExportTarget,
    digest: string,
    incarnation: number,
    reason: ExportReason,
  ): Promise<void> {
    try {
      if (row) await this.deps.store.deny(req.session.tenant, req.operationId, reason);
      else {
        const written = await this.deps.store.insert({
          operationId: req.operationId,
          target,
          principalDigest: digest,
          status: 'denied',
          reason,
          incarnation: incarnation || null,
          recordId: null,
          toolsetId: null,
          bytes: null,
        });
        if (written.status !== 'denied' && sameTarget(written.target, target) && written.principalDigest === digest)
          await this.deps.store.deny(req.session.tenant, req.operationId, reason);
      }
    } catch (error) {
      this.deps.logger.warn({ err: error, operationId: req.operationId, reason }, 'export denial not recorded: the audit store is unavailable');
    }
  }
}
