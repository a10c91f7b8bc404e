import 'reflect-metadata';
import { NatsTransport } from '@apphost/bus';
import { governedOperationsService } from '@apphost/app-governed-operations';
import { createLogger, FAULT_POINTS, loadServiceConfig, startService, type FaultPointName, type FaultPoints } from '@apphost/runtime';

/**
 * governed-operations as its own process (as `apps/governed-operations/src/main.ts` runs it), with one fault point
 * armed from the environment, for suites that SIGKILL the process at an exact instant: `GOVERNED_FAULT_POINT=<point>`
 * holds the code path at that point forever and prints `FAULT_REACHED <point>` on stdout, so the test kills the
 * process there (nothing after the point ever runs). Without the variable it is the plain service. Test-only.
 */
export const FAULT_REACHED = 'FAULT_REACHED ';

async function main(): Promise<void> {
  const config = loadServiceConfig(governedOperationsService, process.env, true);
  const logger = createLogger(governedOperationsService.name, config.INSTANCE_ID, config.LOG_LEVEL);
  const transport = await NatsTransport.connect({
    servers: config.NATS_URL!.split(','), // eslint-disable-line @typescript-eslint/no-non-null-assertion -- the config requires it
    name: `governed-faulted/${config.INSTANCE_ID}`,
    subjectPrefix: config.BUS_SUBJECT_PREFIX,
  });
  const running = await startService(governedOperationsService, {
    env: { ...process.env, INSTANCE_ID: config.INSTANCE_ID },
    transport,
    http: true,
    processMetrics: false,
    logger,
  });
  const point = process.env['GOVERNED_FAULT_POINT'] as FaultPointName | undefined;
  if (point) {
    running.app.get<FaultPoints>(FAULT_POINTS).arm(point, () => {
      process.stdout.write(`${FAULT_REACHED}${point}\n`);
      return new Promise<void>(() => undefined);
    });
  }
  process.stdout.write(`READY ${config.INSTANCE_ID}\n`);
  const stop = () => void running.close().finally(() => void transport.close().finally(() => process.exit(0)));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

if (require.main === module)
  void main().catch((error: unknown) => {
    process.stderr.write(`governed-faulted: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
