import { randomUUID } from 'node:crypto';
import type { BusClient } from '@apphost/bus';
import { canonicalize } from '@apphost/canonical-json';
import {
  AppHostError,
  DEFAULT_EXPORT_POLICY,
  ExportReasons,
  LifecycleGetSessionStanding,
  LifecycleGetWidgetStanding,
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
  type SessionSnapshot,
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
    /** Already on the row (the settling statement wrote it). */
    readonly recorded = false,
  ) {
    super(message);
  }
}

const deny = (code: ErrorCode, reason: ExportReason, message: string) => new Denial(code, reason, message);

/** A promise whose rejection is observed later: it must not count as unhandled while the caller awaits another one. */
function started<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

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

/** The principal as the lifecycle store's revocations know it. */
const principalOf = (req: ExportRequest) => ({ tenant: req.principal.tenant, subject: req.principal.subject });

/**
 * A standing judged in the RFC's order: a revoked principal first, then a session that is absent (foreign or never
 * created: absent) or not ACTIVE; the incarnation of the ACTIVE one.
 */
function activeIncarnation(standing: { revoked: boolean; session: SessionSnapshot | null }): number {
  if (standing.revoked) throw deny('PERMISSION_DENIED', 'PRINCIPAL_REVOKED', 'the principal was revoked');
  const { session } = standing;
  if (!session) throw deny('NOT_FOUND', 'TARGET_NOT_FOUND', 'export target not found');
  if (session.state !== 'ACTIVE')
    throw deny(session.state === 'DELETED' ? 'NOT_FOUND' : 'FAILED_PRECONDITION', 'SESSION_NOT_ACTIVE', 'the session is not active');
  return session.incarnation;
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

/** The toolset's binding as read at one instant; judged by the caller (load and recheck judge in their own order). */
interface Binding {
  /** The toolset's current binding: PROFILE_BOUND under `profileId` (judged by `binding()` before it answers). */
  status: Pick<ToolsetStatus, 'state' | 'profileId' | 'bindingGeneration' | 'bindingRevision'>;
  /** The registry's verdict on the descriptor's revision; null when it refused to verify it (unknown, retired or malformed key). */
  verdict: { valid: boolean; current: boolean; active: boolean } | null;
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

    // The attempt row is not read up front: the audit append (step 4) inserts it or answers the row a retry (or another
    // replica) left, and a failure before it reads the row then. Either way the row is judged first, in this order —
    // the same operation (else CONFLICT or final), then its incarnation once the session's is known — so every answer
    // is the one an up-front read would give, and a fresh export spends one statement less.
    const ledger = started(this.ledger(req));
    let row: AttemptRow | null = null;
    let permit: HeldPermit | null = null;
    let incarnation = 0;
    try {
      let toolsetId: string;
      let bindingRevision: string;
      let recordId: string;
      let loaded: Binding;
      let result: unknown;
      let bytes: number;
      try {
        if (!req.principal.scopes.includes('export')) throw deny('PERMISSION_DENIED', 'PURPOSE_NOT_AUTHORIZED', 'the export scope is required');
        // 2–3. The principal not revoked, the session ACTIVE(n), and tenant, session, incarnation, event and function call
        // against n's ledger: one read, one snapshot (README "Export").
        const standing = await ledger;
        incarnation = activeIncarnation(standing);
        const event = standing.event && 'located' in standing.event ? standing.event.located : null;
        // The ledger also answers calls it holds no sealed result for (Views render legacy widgets): nothing to export.
        if (!event?.sealedResultRef) throw deny('NOT_FOUND', 'TARGET_NOT_FOUND', 'export target not found');
        if (!event.toolsetId || !event.bindingRevision)
          throw deny('FAILED_PRECONDITION', 'NOT_PROFILE_BOUND', 'only profile-bound sealed results can be exported');
        ({ toolsetId, bindingRevision } = event);
        recordId = event.sealedResultRef.recordId;
        const recordKey = { session: req.session, incarnation, eventId: String(req.eventId), functionCallId: req.functionCallId, recordId };
        // The incarnation-bound permit, held until release, the binding and the sealed record, all in parallel; judged
        // in that order. The permit protects the release (its take), not these reads, so their order does not matter.
        const acquiring = started(this.deps.permits.acquire(req.session, incarnation, req.operationId));
        const binding = started(this.binding(toolsetId, bindingRevision));
        const resolving = started(this.request(() => this.sealed.resolve(recordKey)));
        permit = await acquiring.catch(async (error: unknown) => {
          await Promise.allSettled([binding, resolving]);
          throw error;
        });
        if (!permit) throw deny('NOT_FOUND', 'PERMIT_REVOKED', 'the session is being deleted');
        loaded = await binding;
        if (!loaded.verdict?.valid || !loaded.verdict.current)
          throw deny('FAILED_PRECONDITION', 'BINDING_KEY_INVALID', 'the binding revision no longer verifies');
        const resolved = await resolving;
        result = project(resolved.envelope.result, req.projection);
        bytes = Buffer.byteLength(canonicalize(result as never), 'utf8');
        this.withinPolicy(loaded.policy, req.projection, bytes);
      } catch (error) {
        row = await store.load(tenant, req.operationId).catch((failure: unknown) => {
          throw auditUnavailable(failure);
        });
        if (row) this.judgeRetry(row, target, digest, incarnation);
        throw error;
      }

      // 4. The authorized row, committed before anything is released.
      await this.deps.faults.hit('export.before-audit-append');
      row = await this.authorize(req, target, digest, { incarnation, recordId, toolsetId, bytes }, (held) => (row = held));
      await this.deps.faults.hit('export.after-audit-append');

      // 5. The recheck, immediately before release: anything that changed denies. A binding change or key rotation is
      // recorded only after the limits (step 6), so a narrowed limit is the reason an export is denied for.
      await this.deps.faults.hit('export.before-recheck');
      const { now, changed } = await this.recheck(req, incarnation, toolsetId, bindingRevision, loaded, bytes);
      if (!changed) {
        const taken = await this.deps.permits.take(permit);
        permit = null;
        if (!taken) throw deny('NOT_FOUND', 'PERMIT_REVOKED', 'the session was deleted during the export');
      }

      // 6. Released or denied in one statement that also judges the bulk cap and the rate at the instant of the write.
      // `released` is an attempt record (not proof of delivery); then one materialized answer.
      const clock = this.deps.now ?? Date.now;
      const { row: settled, deniedFor } = await store
        .settle({
          tenant,
          operationId: req.operationId,
          session: req.session,
          incarnation,
          principalDigest: digest,
          since: new Date(clock() - 60_000),
          bulkCap: now.policy.bulkCap,
          perPrincipalPerMinute: now.policy.perPrincipalPerMinute,
          denial: changed?.reason ?? null,
        })
        .catch((error: unknown) => {
          throw auditUnavailable(error);
        });
      if (!settled) throw new AppHostError('FAILED_PRECONDITION', 'the export was denied', { details: ExportReasons.details('EXPORT_DENIED') });
      if (deniedFor === 'BULK_CAP_REACHED') throw new Denial('RESOURCE_EXHAUSTED', deniedFor, 'the session reached its export bulk cap', true);
      if (deniedFor === 'RATE_LIMITED') throw new Denial('RESOURCE_EXHAUSTED', deniedFor, 'too many exports this minute', true);
      if (changed) throw new Denial(changed.code, changed.reason, changed.message, true);
      const released = settled;
      await this.deps.faults.hit('export.after-release');
      this.deps.logger.info({ exportId: released.exportId, releaseCount: released.releaseCount, bytes }, 'export released');
      return { exportId: released.exportId, status: 'released', releaseCount: released.releaseCount, bytes, result };
    } catch (error) {
      if (error instanceof Denial) {
        if (!error.recorded) await this.recordDenial(row, req, target, digest, incarnation, error.reason);
        this.deps.logger.info({ operationId: req.operationId, reason: error.reason }, 'export denied');
        throw new AppHostError(error.code, error.message, { details: ExportReasons.details(error.reason) });
      }
      throw error;
    } finally {
      if (permit) await this.deps.permits.drop(permit).catch(() => undefined);
    }
  }

  /** The projection and the size against an export policy. */
  private withinPolicy(policy: ExportPolicy, projection: ExportProjection, bytes: number): void {
    if (!policy.projections.includes(projection))
      throw deny('PERMISSION_DENIED', 'PROJECTION_NOT_ALLOWED', `the profile does not allow the ${projection} projection`);
    if (bytes > policy.maxBytes) throw deny('PAYLOAD_TOO_LARGE', 'EXPORT_TOO_LARGE', `the export is ${bytes} bytes; the profile allows ${policy.maxBytes}`);
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

  /**
   * A row found by a retry (or written by another replica), judged in step 1's order: the same operation, else CONFLICT
   * or final; then, once the session's incarnation is known (non-zero), the incarnation the row was authorized in.
   */
  private judgeRetry(row: AttemptRow, target: ExportTarget, digest: string, incarnation: number): void {
    this.sameOperation(row, target, digest);
    if (incarnation !== 0 && row.incarnation != null && row.incarnation !== incarnation)
      throw deny('FAILED_PRECONDITION', 'STALE_INCARNATION', 'the session was recreated since this export was authorized');
  }

  /**
   * The `authorized` row in one committed statement: a fresh attempt's insert. When the key already holds a row (a
   * retry, or another replica racing the same id), that row is handed to `found` (a denial from here on is recorded on
   * it), judged as a retry and re-authorized with this attempt's facts (a second statement, as before: a retry always
   * read the row, then updated it).
   */
  private async authorize(
    req: ExportRequest,
    target: ExportTarget,
    digest: string,
    facts: { incarnation: number; recordId: string; toolsetId: string; bytes: number },
    found: (row: AttemptRow) => void,
  ): Promise<AttemptRow> {
    const exportId = randomUUID();
    let written: AttemptRow;
    try {
      await this.deps.faults.hit('export.inside-audit-append');
      written = await this.deps.store.insert({
        exportId,
        operationId: req.operationId,
        target,
        principalDigest: digest,
        status: 'authorized',
        reason: null,
        ...facts,
      });
    } catch (error) {
      throw auditUnavailable(error);
    }
    if (written.exportId === exportId) return written;
    found(written);
    this.judgeRetry(written, target, digest, facts.incarnation);
    const reauthorized = await this.deps.store.authorize(req.session.tenant, req.operationId, facts).catch((error: unknown) => {
      throw auditUnavailable(error);
    });
    if (!reauthorized) this.sameOperation({ ...written, status: 'denied' }, target, digest);
    return written;
  }

  /**
   * Everything that could have changed since step 3, read again in parallel and judged in a fixed order, so a race
   * always denies for the same reason: the principal; the session; the toolset still profile-bound; the export policy
   * of the profile it names now (a rebind to a narrower profile denies for the limit the export no longer fits); then
   * the bulk cap and the rate of that policy (judged by the settling statement); last, the binding generation and
   * revision and the signing key, whose denial is answered as `changed` for the settling statement to record.
   */
  private async recheck(
    req: ExportRequest,
    incarnation: number,
    toolsetId: string,
    bindingRevision: string,
    loaded: Binding,
    bytes: number,
  ): Promise<{ now: Binding; changed: Denial | null }> {
    // The principal is the one the gateway verified for this request (README "Limits"), so its digest is the one step 1
    // computed: its scope is judged again, and its revocation is read again with the session.
    if (!req.principal.scopes.includes('export')) throw deny('PERMISSION_DENIED', 'PRINCIPAL_CHANGED', 'the principal changed');
    const standing = this.request(() =>
      this.deps.bus.request(LifecycleGetSessionStanding, { session: req.session, principal: principalOf(req) }, { timeoutMs: this.deps.timeoutMs }),
    );
    const [current, now] = await settledInOrder([standing.then(activeIncarnation), this.binding(toolsetId, bindingRevision)] as const);
    if (current !== incarnation) throw deny('FAILED_PRECONDITION', 'STALE_INCARNATION', 'the session was recreated');
    this.withinPolicy(now.policy, req.projection, bytes);
    if (now.status.bindingGeneration !== loaded.status.bindingGeneration || now.status.bindingRevision !== loaded.status.bindingRevision)
      return { now, changed: deny('FAILED_PRECONDITION', 'BINDING_CHANGED', 'the toolset was rebound during the export') };
    if (!now.verdict?.valid || !now.verdict.current || (loaded.verdict?.active && !now.verdict.active))
      return { now, changed: deny('FAILED_PRECONDITION', 'BINDING_KEY_INVALID', 'the binding key was rotated during the export') };
    return { now, changed: null };
  }

  /** The principal's revocation, the session's record and, on an ACTIVE(n) record, the call's event on n's ledger. */
  private ledger(req: ExportRequest) {
    const { session, eventId, functionCallId } = req;
    return this.request(() =>
      this.deps.bus.request(LifecycleGetWidgetStanding, { session, principal: principalOf(req), eventId, functionCallId }, { timeoutMs: this.deps.timeoutMs }),
    );
  }

  /**
   * The toolset's binding as the registry has it now: PROFILE_BOUND (else NOT_PROFILE_BOUND), the registry's verdict on
   * the descriptor's revision, and the export policy of the profile the toolset names. One `verify-binding-revision`
   * answers all three (the verdict and the binding it was judged against, read in one statement). When it cannot — a
   * refusal (model-only toolset, unknown toolset or profile, a malformed, unknown or retired key), a failure, or an
   * older registry whose answer carries no binding — `get-toolset` answers the binding as it always did, and the
   * decisions are taken in the same order: the toolset's refusal or state first, then the verdict (null when refused).
   */
  private async binding(toolsetId: string, bindingRevision: string): Promise<Binding> {
    const opts = { timeoutMs: this.deps.timeoutMs };
    const verified = await this.deps.bus.request(RegistryVerifyBindingRevision, { toolsetId, bindingRevision }, opts).then(
      (answer) => ({ answer, failure: null }),
      (failure: unknown) => ({ answer: null, failure }),
    );
    const status = verified.answer?.binding ?? (await this.request(() => this.deps.bus.request(RegistryGetToolset, { toolsetId }, opts)));
    if (status.state !== 'PROFILE_BOUND' || !status.profileId) throw deny('FAILED_PRECONDITION', 'NOT_PROFILE_BOUND', 'the toolset is not profile-bound');
    const { failure } = verified;
    const refused =
      failure instanceof AppHostError && (failure.code === 'FAILED_PRECONDITION' || failure.code === 'INVALID_ARGUMENT' || failure.code === 'NOT_FOUND');
    if (failure && !refused) throw failure;
    const profile = await this.profile(status.profileId);
    return { status, verdict: verified.answer, policy: profile.export ?? DEFAULT_EXPORT_POLICY };
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
