import { createHash } from 'node:crypto';
import Ajv2020, { type ErrorObject, type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { canonicalize } from '@apphost/canonical-json';
import { AppHostError, GovernedReasons } from '@apphost/contracts';

/** How many compiled input schemas one replica keeps (one per tool definition in use; oldest evicted first). */
const SCHEMA_CACHE_SIZE = 512;

/**
 * `$schema` values compiled under 2020-12 semantics: what MCP servers emit (SDKs write draft-07) differs from 2020-12
 * only in keywords tool arguments rarely use. Any other `$schema` is unknown to ajv: the schema fails closed.
 */
const KNOWN_DRAFTS = new Set([
  'http://json-schema.org/draft-07/schema#',
  'http://json-schema.org/draft-07/schema',
  'https://json-schema.org/draft/2019-09/schema',
  'https://json-schema.org/draft/2020-12/schema',
]);

/** A schema that did not compile: every call of its tool is refused (fail closed). */
const UNCOMPILABLE = Symbol('uncompilable');

/** What a tool's arguments must satisfy when it declares no `inputSchema`: an object (MCP requires one). */
const OBJECT_SCHEMA = { type: 'object' };

/**
 * A tool's arguments against its declared `inputSchema` (JSON Schema 2020-12, ajv 8 with formats), immediately
 * before the call. Each schema is compiled once per fingerprint (its canonical JSON's digest), in a bounded cache;
 * one that does not compile refuses every call: INVALID_ARGUMENT `TOOL_ARGUMENTS_INVALID` either way.
 */
export class ArgumentSchemas {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: true });
  private readonly compiled = new Map<string, ValidateFunction | typeof UNCOMPILABLE>();

  constructor(private readonly cacheSize = SCHEMA_CACHE_SIZE) {
    addFormats(this.ajv);
  }

  check(tool: string, inputSchema: unknown, args: Record<string, unknown>): void {
    const validate = this.validatorOf(inputSchema ?? OBJECT_SCHEMA);
    if (validate === UNCOMPILABLE)
      throw new AppHostError('INVALID_ARGUMENT', `the input schema of ${tool} cannot be compiled: its calls are refused`, {
        details: GovernedReasons.details('TOOL_ARGUMENTS_INVALID', { tool, issues: [{ path: '(schema)', message: 'the input schema does not compile' }] }),
      });
    if (validate(args)) return;
    throw new AppHostError('INVALID_ARGUMENT', `the arguments do not match the input schema of ${tool}`, {
      details: GovernedReasons.details('TOOL_ARGUMENTS_INVALID', { tool, issues: issuesOf(validate.errors ?? []) }),
    });
  }

  private validatorOf(inputSchema: unknown): ValidateFunction | typeof UNCOMPILABLE {
    let fingerprint: string;
    try {
      fingerprint = createHash('sha256').update(canonicalize(inputSchema)).digest('hex');
    } catch {
      return UNCOMPILABLE; // not even canonical JSON
    }
    const known = this.compiled.get(fingerprint);
    if (known) return known;
    const validate = compile(this.ajv, inputSchema);
    if (this.compiled.size >= this.cacheSize) {
      const oldest = this.compiled.keys().next().value as string;
      const evicted = this.compiled.get(oldest);
      this.compiled.delete(oldest);
      // ajv keeps every schema it compiled (keyed by the schema object): without this the bound would be ours only.
      if (evicted !== undefined && evicted !== UNCOMPILABLE) this.ajv.removeSchema(evicted.schema as object);
    }
    this.compiled.set(fingerprint, validate);
    return validate;
  }
}

function compile(ajv: Ajv2020, inputSchema: unknown): ValidateFunction | typeof UNCOMPILABLE {
  if (typeof inputSchema !== 'object' || inputSchema === null || Array.isArray(inputSchema)) return UNCOMPILABLE;
  const { $schema, ...rest } = inputSchema as Record<string, unknown>;
  if ($schema !== undefined && !KNOWN_DRAFTS.has(String($schema))) return UNCOMPILABLE;
  try {
    // Never added to ajv's registry by id: two servers' schemas with one `$id` must not collide.
    const { $id: _id, ...anonymous } = rest;
    return ajv.compile(anonymous);
  } catch {
    return UNCOMPILABLE;
  }
}

/** At most a few issues, each a path and message (never the offending value: it may be user data). */
function issuesOf(errors: ErrorObject[]): { path: string; message: string }[] {
  return errors.slice(0, 8).map((e) => ({ path: e.instancePath === '' ? '(root)' : e.instancePath, message: e.message ?? e.keyword }));
}
