import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { fixtureServerCommand, type FixtureServerName } from '@apphost/testing';

/**
 * A v2 SDK client on a process of its own of a stdio fixture, with nothing between: a bench's direct baseline, and the
 * connections its composite floor lists and calls on (the plane's registry owner holds its own, one a connection
 * class, so the composite does not share the baseline's process either).
 */
export async function connectDirect(fixture: FixtureServerName, name: string): Promise<Client> {
  const client = new Client({ name, version: '1' }, {});
  await client.connect(new StdioClientTransport({ ...fixtureServerCommand(fixture), env: getDefaultEnvironment(), stderr: 'ignore' }));
  return client;
}
