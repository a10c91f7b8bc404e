import { finished } from 'node:stream';
import express, { type RequestHandler } from 'express';
import { AppHostError } from '@apphost/contracts';

/** The route whose body this parser reads (an express path: the gateway's JSON parser never sees it). */
export const VIEW_RPC_ROUTE = '/v1/views/:viewId/rpc';

/**
 * What the View RPC's own body parser made of the HTTP body, before anything is parsed as JSON: the raw bytes of a
 * `application/json` (UTF-8) body, or why there are none. The controller parses the bytes once; their length is the
 * `bytes` governed-operations checks against the profile's `rpc.maxRequestBytes`.
 */
export type ViewRpcBody =
  | { kind: 'raw'; raw: Buffer }
  /** Absent, empty, not `application/json`, a charset other than UTF-8, an unknown content encoding or an aborted read. */
  | { kind: 'unreadable'; why: string }
  /** Over the route's limit (the largest profile limit): the read stopped there. */
  | { kind: 'too-large'; limitBytes: number };

const BODY = Symbol('apphost.view-rpc.body');
type WithBody = { [BODY]?: ViewRpcBody };

/**
 * The View RPC's body parser, mounted before the gateway's JSON parser (whose 100 KiB limit stays for every other
 * route): reads any body up to `limitBytes` as bytes, never fails the request (a JSON-RPC answer explains it), and
 * leaves the stream consumed so no later parser reads it again.
 */
export function viewRpcBodyParser(limitBytes: number): RequestHandler {
  const raw = express.raw({ type: () => true, limit: limitBytes });
  return (req, res, next) => {
    if (req.method !== 'POST') return next();
    raw(req, res, (error?: unknown) => {
      (req as WithBody)[BODY] = error ? failureOf(error, limitBytes) : classify(req);
      if (req.readableEnded) return next();
      // A refusal before the read (an unknown content encoding) left the body unread: drain it, so no later parser tries.
      req.resume();
      finished(req, () => next());
    });
  };
}

/** The body the parser left on this request; a request it never saw is a wiring mistake. */
export function viewRpcBodyOf(req: object): ViewRpcBody {
  const body = (req as WithBody)[BODY];
  if (!body) throw new AppHostError('INTERNAL', 'the View RPC body parser did not run for this request');
  return body;
}

function classify(req: express.Request): ViewRpcBody {
  if (!Buffer.isBuffer(req.body) || req.body.length === 0) return { kind: 'unreadable', why: 'the body is empty' };
  if (req.is('application/json') !== 'application/json') return { kind: 'unreadable', why: 'the body must be application/json' };
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(req.headers['content-type'] ?? '')?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') return { kind: 'unreadable', why: 'the body must be UTF-8' };
  return { kind: 'raw', raw: req.body };
}

function failureOf(error: unknown, limitBytes: number): ViewRpcBody {
  const type = (error as { type?: unknown }).type;
  if (type === 'entity.too.large') return { kind: 'too-large', limitBytes };
  return { kind: 'unreadable', why: type === 'encoding.unsupported' ? 'unsupported content encoding' : 'the body could not be read' };
}
