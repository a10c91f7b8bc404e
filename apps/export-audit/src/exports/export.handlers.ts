import { Inject, Injectable, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { BusHandler } from '@apphost/bus';
import { ExportAuditExport, ExportAuditListExports, ExportAuditPurge, ExportAuditRevoke, type ParsedRequestOf, type ResponseOf } from '@apphost/contracts';
import type { Logger } from '@apphost/runtime';
import { auditUnavailable, ExportAuditStore, redactRow } from '../audit/export-audit.store';
import type { ExportAuditConfig } from '../config';
import { ExportPermits } from './export-permits';
import { ExportService } from './export.service';

export const EXPORT_CONFIG = Symbol('EXPORT_CONFIG');
export const EXPORT_LOGGER = Symbol('EXPORT_LOGGER');

/** The bus surface of export-audit: export, the redacted audit listing, and its two deletion-cascade operations. */
@Injectable()
export class ExportHandlers {
  constructor(
    @Inject(ExportService) private readonly exports: ExportService,
    @Inject(ExportAuditStore) private readonly store: ExportAuditStore,
    @Inject(ExportPermits) private readonly permits: ExportPermits,
    @Inject(EXPORT_CONFIG) private readonly config: ExportAuditConfig,
    @Inject(EXPORT_LOGGER) private readonly logger: Logger,
  ) {}

  @BusHandler(ExportAuditExport)
  export(r: ParsedRequestOf<typeof ExportAuditExport>): Promise<ResponseOf<typeof ExportAuditExport>> {
    return this.exports.export(r);
  }

  @BusHandler(ExportAuditListExports)
  async list(r: ParsedRequestOf<typeof ExportAuditListExports>): Promise<ResponseOf<typeof ExportAuditListExports>> {
    const rows = await this.store.list(r.session, r.limit ?? 100).catch((error: unknown) => Promise.reject(auditUnavailable(error)));
    return { exports: rows.map(redactRow) };
  }

  /** Fences the incarnation's permits: an export that has not taken its permit yet is denied. */
  @BusHandler(ExportAuditRevoke)
  async revoke(r: ParsedRequestOf<typeof ExportAuditRevoke>): Promise<{ done: true; fenced: number }> {
    const fenced = await this.permits.revoke(r.session, r.incarnation);
    this.logger.info({ session: r.session.sessionId, incarnation: r.incarnation, fenced }, 'cascade revoke');
    return { done: true, fenced };
  }

  /** Applies the configured retention: `keep` leaves the redacted rows until their retention deadline, `delete` removes them. */
  @BusHandler(ExportAuditPurge)
  async purge(r: ParsedRequestOf<typeof ExportAuditPurge>): Promise<{ done: true; deleted: number }> {
    await this.permits.revoke(r.session, r.incarnation);
    const deleted = this.config.EXPORT_CASCADE_RETENTION === 'delete' ? await this.store.deleteSession(r.session, r.incarnation) : 0;
    this.logger.info({ session: r.session.sessionId, incarnation: r.incarnation, deleted }, 'cascade purge');
    return { done: true, deleted };
  }
}

/** The retention purge job: every EXPORT_PURGE_INTERVAL_MS, deletes the rows past their retention deadline. */
@Injectable()
export class RetentionPurge implements OnApplicationBootstrap, OnApplicationShutdown {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    @Inject(ExportAuditStore) private readonly store: ExportAuditStore,
    @Inject(EXPORT_CONFIG) private readonly config: ExportAuditConfig,
    @Inject(EXPORT_LOGGER) private readonly logger: Logger,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.EXPORT_PURGE_INTERVAL_MS === 0) return;
    this.timer = setInterval(() => void this.run(), this.config.EXPORT_PURGE_INTERVAL_MS);
    this.timer.unref();
  }

  async run(): Promise<number> {
    try {
      const deleted = await this.store.purgeExpired();
      if (deleted > 0) this.logger.info({ deleted }, 'export audit retention purge');
      return deleted;
    } catch (err) {
      this.logger.warn({ err }, 'export audit retention purge failed');
      return 0;
    }
  }

  onApplicationShutdown(): void {
    if (this.timer) clearInterval(this.timer);
  }
}
