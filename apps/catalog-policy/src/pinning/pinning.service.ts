import { Inject, Injectable } from '@nestjs/common';
import { AppHostError, CatalogReasons, type ResponseOf, type CatalogApproveTool } from '@apphost/contracts';
import type { Logger } from '@apphost/runtime';
import { CATALOG_LOGGER } from '../catalog.tokens';
import type { Candidate } from '../compose/listing';
import type { QuarantineCheck } from '../compose/compose';
import { PinsRepository, type ConnectionClass, type PinRow } from '../store/pins.repository';

const keyOf = (cls: ConnectionClass, name: string) => `${cls}\u0000${name}`;

/**
 * Tool-definition pinning: the first sight of a (toolset, class, tool) records its fingerprint; a later listing
 * with another fingerprint quarantines it from both catalogs until an admin approves the new definition.
 */
@Injectable()
export class PinningService {
  constructor(
    private readonly pins: PinsRepository,
    @Inject(CATALOG_LOGGER) private readonly logger: Logger,
  ) {}

  /**
   * The toolset's pins on these classes, read now: asked while the toolset is listed, so the pin read and the listing
   * share one round trip of waiting. Pins are never deleted, so a read taken before the listing holds every pin it
   * would have found after it, except a first sight recorded meanwhile, which `evaluate` records (or finds) again.
   */
  prefetch(toolsetId: string, classes: readonly ConnectionClass[]): Promise<PinRow[]> {
    const read = this.pins.loadClasses(toolsetId, classes);
    read.catch(() => undefined); // awaited by `evaluate`; a listing that failed first never awaits it
    return read;
  }

  /**
   * Records/compares every candidate's definition; the answer tells composition which ones are quarantined.
   * `prefetched`: the toolset's pins as `prefetch` read them while the candidates were listed.
   */
  async evaluate(toolsetId: string, candidates: readonly Candidate[], prefetched?: Promise<PinRow[]>): Promise<QuarantineCheck> {
    const sightings = candidates.map((c) => ({
      connectionClass: c.generation.connectionClass,
      name: c.tool.name,
      fingerprint: c.tool.fingerprint,
      declaration: c.tool.declaration,
    }));
    const stored = new Map((await this.pins.recordAndLoad(toolsetId, sightings, prefetched)).map((p) => [keyOf(p.connectionClass, p.name), p]));
    const quarantined = new Set<string>();
    for (const s of sightings) {
      const key = keyOf(s.connectionClass, s.name);
      const pin = stored.get(key);
      if (!pin) {
        quarantined.add(key); // vanished under us (never deleted today): fail closed
        continue;
      }
      if (pin.approvedFingerprint === s.fingerprint) continue;
      quarantined.add(key);
      const previous = await this.pins.quarantine(toolsetId, s);
      if (previous)
        this.logger.warn(
          { toolsetId, tool: s.name, connectionClass: s.connectionClass, approvedFingerprint: previous, newFingerprint: s.fingerprint },
          'tool definition drifted: quarantined until approved',
        );
    }
    return (c) => quarantined.has(keyOf(c.generation.connectionClass, c.tool.name));
  }

  async approve(toolsetId: string, name: string, fingerprint: string | undefined, actor: string): Promise<ResponseOf<typeof CatalogApproveTool>> {
    const current = await this.pins.list(toolsetId, name);
    if (current.length === 0)
      throw new AppHostError('NOT_FOUND', `tool ${name} of toolset ${toolsetId} has never been listed`, { details: CatalogReasons.details('TOOL_NOT_PINNED') });
    if (fingerprint && !current.some((p) => p.candidateFingerprint === fingerprint)) {
      throw new AppHostError(
        'CONFLICT',
        'the fingerprint is not the quarantined candidate of this tool (the definition changed again, or was never quarantined)',
        {
          details: CatalogReasons.details('FINGERPRINT_NOT_CANDIDATE', { candidates: current.map((p) => p.candidateFingerprint).filter(Boolean) }),
        },
      );
    }
    const { before, after } = await this.pins.approve(toolsetId, name, fingerprint ?? null, actor);
    const approved = after.flatMap((a) => {
      const b = before.find((x) => x.connectionClass === a.connectionClass);
      return b && b.state === 'QUARANTINED' && a.state === 'APPROVED'
        ? [{ connectionClass: a.connectionClass, previousFingerprint: b.approvedFingerprint, fingerprint: a.approvedFingerprint }]
        : [];
    });
    for (const a of approved) this.logger.warn({ toolsetId, tool: name, ...a, approvedBy: actor }, 'tool definition approved');
    return { pins: after, approved };
  }

  async list(toolsetId: string) {
    return this.pins.list(toolsetId);
  }
}
