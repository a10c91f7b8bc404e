import { Client } from 'pg';
import type { SessionKey } from '@apphost/contracts';
import { FAULT_POINTS, type FaultPoints } from '@apphost/runtime';
import { SealedResultClient } from '@apphost/sealed-results';
import { bootService, type ServiceUnderTest } from '@apphost/testing';
import { SealedCollector } from '../sealed/sealed-collector';
import { SealedResultService } from '../sealed/sealed-result.service';
import type { SealedFaultPoint } from '../sealed/sealed.faults';
import { sealedResultStoreService } from '../service';

/** One booted store under test: bus client, protocol client, the in-process domain service, and a raw pg peek. */
export interface SealedUnderTest {
  service: ServiceUnderTest;
  client: SealedResultClient;
  domain: SealedResultService;
  collector: SealedCollector;
  faults: FaultPoints<SealedFaultPoint>;
  pg: Client;
  schema: string;
  stop(): Promise<void>;
  countRecords(session: SessionKey): Promise<number>;
  countSessionRows(session: SessionKey): Promise<number>;
  recordRow(recordId: string): Promise<{ state: string; event_id: string | null; digest: Buffer; body: Buffer } | undefined>;
}

export async function bootSealed(url: string, prefix: string, env: Record<string, string> = {}): Promise<SealedUnderTest> {
  const service = await bootService(sealedResultStoreService, prefix, { DATABASE_URL: url, SEALED_GC_INTERVAL_MS: '0', ...env });
  const pg = new Client({ connectionString: url });
  await pg.connect();
  const schema = `${prefix}sealed_result_store`;
  const domain = service.running.app.get(SealedResultService);
  return {
    service,
    client: new SealedResultClient(service.client, { timeoutMs: 20_000 }),
    domain,
    collector: service.running.app.get(SealedCollector),
    faults: service.running.app.get<FaultPoints<SealedFaultPoint>>(FAULT_POINTS),
    pg,
    schema,
    stop: async () => {
      await pg.end();
      await service.stop();
    },
    countRecords: async (s) =>
      Number(
        (
          await pg.query(`SELECT count(*) AS n FROM "${schema}".sealed_records WHERE tenant = $1 AND app_name = $2 AND user_id = $3 AND session_id = $4`, [
            s.tenant,
            s.appName,
            s.userId,
            s.sessionId,
          ])
        ).rows[0].n,
      ),
    countSessionRows: async (s) =>
      Number(
        (
          await pg.query(
            `SELECT count(*) AS n FROM "${schema}".session_incarnations WHERE tenant = $1 AND app_name = $2 AND user_id = $3 AND session_id = $4`,
            [s.tenant, s.appName, s.userId, s.sessionId],
          )
        ).rows[0].n,
      ),
    recordRow: async (recordId) =>
      (await pg.query(`SELECT state, event_id, digest, body FROM "${schema}".sealed_records WHERE record_id = $1`, [recordId])).rows[0],
  };
}
