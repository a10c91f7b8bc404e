import fs from 'node:fs';
import path from 'node:path';
import { errorCodeSchema, GovernedReasons, JSON_RPC_CODE_BY_ERROR, JSON_RPC_PROTOCOL_CODES, jsonRpcCodeOf, type ErrorCode } from '@apphost/contracts';
import { REPO_ROOT } from '@apphost/testing';
import { viewRpcMessageOf } from './view-rpc.messages';

/** The JSON-RPC error table of `docs/view-rpc.md` against the contract's (`JSON_RPC_CODE_BY_ERROR`, `jsonRpcCodeOf`). */
interface Row {
  code: number;
  dataCode: ErrorCode;
  reasons: string[];
  /** "any other": the row of the error code's own number. */
  anyOther: boolean;
}

function documentedRows(): Row[] {
  const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs/view-rpc.md'), 'utf8');
  const section = doc.split(/^## /m).find((s) => s.startsWith('JSON-RPC errors'));
  if (!section) throw new Error('docs/view-rpc.md has no "JSON-RPC errors" section');
  return section
    .split('\n')
    .filter((line) => /^\| -?\d/.test(line))
    .map((line) => {
      const [code, dataCode, reasons] = line
        .split('|')
        .slice(1, 4)
        .map((cell) => cell.trim());
      return {
        code: Number(code),
        dataCode: errorCodeSchema.parse(dataCode.replace(/`/g, '')),
        reasons: [...reasons.matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]),
        anyOther: reasons.includes('any other'),
      };
    });
}

const ALL_CODES = errorCodeSchema.options as readonly ErrorCode[];
/** Reasons answered with a protocol number instead of their error code's (the contract keeps the list private). */
const PROTOCOL_REASONS = GovernedReasons.values.filter((reason) => ALL_CODES.some((code) => jsonRpcCodeOf(code, reason) !== JSON_RPC_CODE_BY_ERROR[code]));

describe('the JSON-RPC error table of docs/view-rpc.md', () => {
  const rows = documentedRows();
  const parseRows = rows.filter((r) => r.code === JSON_RPC_PROTOCOL_CODES.PARSE_ERROR);
  const otherRows = rows.filter((r) => r.code !== JSON_RPC_PROTOCOL_CODES.PARSE_ERROR);

  it('has one "any other" row per error code, with the contract’s number', () => {
    const defaults = otherRows.filter((r) => r.anyOther);
    expect(defaults.map((r) => r.dataCode).sort()).toEqual([...ALL_CODES].sort());
    for (const row of defaults) expect([row.dataCode, row.code]).toEqual([row.dataCode, JSON_RPC_CODE_BY_ERROR[row.dataCode]]);
  });

  it('gives every listed reason the number jsonRpcCodeOf answers, and lists every protocol reason', () => {
    const listed = otherRows.flatMap((row) => row.reasons.map((reason) => ({ reason, dataCode: row.dataCode, code: row.code })));
    for (const { reason, dataCode, code } of listed) {
      expect(GovernedReasons.values).toContain(reason);
      expect({ reason, code: jsonRpcCodeOf(dataCode, reason) }).toEqual({ reason, code });
    }
    expect(PROTOCOL_REASONS.length).toBeGreaterThan(0);
    expect(PROTOCOL_REASONS.filter((reason) => !listed.some((l) => l.reason === reason))).toEqual([]);
    // A protocol row (no "any other") lists only protocol reasons: it is the number of those reasons alone.
    for (const row of otherRows.filter((r) => !r.anyOther)) expect(PROTOCOL_REASONS).toEqual(expect.arrayContaining(row.reasons));
  });

  it('documents the parse error as the gateway answers it', () => {
    const answer = viewRpcMessageOf({ kind: 'raw', raw: Buffer.from('{"jsonrpc":') });
    expect(answer).toMatchObject({ id: null, error: { code: JSON_RPC_PROTOCOL_CODES.PARSE_ERROR } });
    const data = (answer as { error: { data: { code: ErrorCode; reason: string } } }).error.data;
    expect(parseRows).toEqual([{ code: JSON_RPC_PROTOCOL_CODES.PARSE_ERROR, dataCode: data.code, reasons: [data.reason], anyOther: false }]);
  });
});
