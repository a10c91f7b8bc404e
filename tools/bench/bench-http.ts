import { Agent, request, type IncomingHttpHeaders } from 'node:http';
import { VIEW_ORIGIN, type HttpReply, type viewHttp } from '../plane/views-harness';
import { round3, type Measurement } from './harness';

type GatewayHttp = ReturnType<typeof viewHttp>;

/**
 * The load generator's HTTP client, with the call shape of the tests' `viewHttp` (bearer, the host page's Origin unless
 * `origin: null`, a JSON body): `node:http` on one keep-alive agent, the answer read as bytes, decoded once and parsed
 * once — the work a direct SDK client does with its stdio line. Not `fetch`: undici's web streams and its own UTF-8
 * decoder cost ≈ 0.4 ms of CPU more per small answer here and ≈ 2 ms per 218 KB View, and in `plane` mode that CPU runs
 * on the plane's own event loop, where a bench would count it as the gateway's.
 */
export function benchHttp(plane: { base: string }): GatewayHttp {
  const url = new URL(plane.base);
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  return (method, path, options) =>
    new Promise<HttpReply>((resolve, reject) => {
      const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body), 'utf8');
      const origin = options.origin === undefined ? VIEW_ORIGIN : options.origin;
      const req = request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          method,
          path,
          headers: {
            authorization: `Bearer ${options.bearer}`,
            ...(origin ? { origin } : {}),
            ...(payload ? { 'content-type': 'application/json', 'content-length': String(payload.byteLength) } : {}),
            ...options.headers,
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            try {
              resolve({ status: res.statusCode ?? 0, text, headers: headersOf(res.headers), body: text ? (JSON.parse(text) as HttpReply['body']) : {} });
            } catch (error) {
              reject(error instanceof Error ? error : new Error(String(error)));
            }
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
}

function headersOf(incoming: IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming)) {
    for (const one of Array.isArray(value) ? value : value === undefined ? [] : [value]) headers.append(name, one);
  }
  return headers;
}

/**
 * The HTTP edge alone, through the same client: `GET /healthz` (no token check, no bus request, no store), the least
 * any request to the gateway costs. Each bench prints it beside its path, so the share of the edge in the path's added
 * time (and the ceiling it puts on throughput in `plane` mode, where it shares the one event loop) is measured.
 */
export function edgeFloor(http: GatewayHttp): () => Promise<void> {
  return async () => {
    const res = await http('GET', '/healthz', { bearer: 'none', origin: null });
    if (res.status !== 200) throw new Error(`GET /healthz: ${res.status}`);
  };
}

/** The edge floor's fields in a bench's JSON line. */
export function edgeFields(edge: Measurement): { edge_p50_ms: number; edge_ops_s: number } {
  return { edge_p50_ms: round3(edge.p50_ms), edge_ops_s: round3(edge.ops_s) };
}
