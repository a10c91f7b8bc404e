import 'reflect-metadata';
import fs from 'node:fs';
import { ConfigError } from '@apphost/runtime';
import { parsePlaneConfig } from './plane-config';
import { startPlane } from './plane';

/**
 * `npm start`: the whole plane in one process. Ctrl-C (or SIGTERM) stops it in order, the embedded database last
 * (it runs in its own process group, so the terminal's signal does not reach it); a second Ctrl-C forces the stop.
 * Data stays in APPHOST_HOME.
 */
async function main(): Promise<void> {
  let config;
  try {
    config = parsePlaneConfig(process.env);
  } catch (error) {
    process.stderr.write(`${error instanceof ConfigError ? error.message : String(error)}\n`);
    process.exit(2);
  }
  // The handlers come first: the gateway answers HTTP before the demo is registered, and a signal in between must
  // still stop the plane in order (once it has started).
  const starting = startPlane(config, process.env);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) {
      // A second Ctrl-C: give up on the orderly stop; the embedded database still gets its fast shutdown on exit.
      process.stdout.write(`\n${signal}: forcing the stop\n`);
      process.exit(130);
    }
    stopping = true;
    process.stdout.write(`\n${signal}: stopping AppHost (services, then the database; again to force)…\n`);
    starting
      .then((plane) => plane.stop())
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));

  const plane = await starting;
  if (stopping) return;
  // The host page link carries the development token in its fragment (never sent to a server); jwt mode has none.
  const token =
    (process.env.AUTH_MODE ?? 'development') === 'development' && fs.existsSync(plane.tokenFile) ? fs.readFileSync(plane.tokenFile, 'utf8').trim() : undefined;
  process.stdout.write(
    `\nAppHost is running at ${plane.url}\n` +
      (token ? `  open the host page: ${plane.hostUrl}#token=${token}\n` : `  host page: ${plane.hostUrl}\n`) +
      (plane.demo ? '  demo apps registered from examples/ (APPHOST_DEMO=false to skip)\n' : '') +
      `  development token: ${plane.tokenFile}\n  try: curl -H "Authorization: Bearer $(cat ${plane.tokenFile})" ${plane.url}/v1/services\n\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`AppHost failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
