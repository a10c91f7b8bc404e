import { CanonicalJsonError, type CanonicalJsonErrorReason } from './errors';

export type CanonicalLimits = { maxBytes: number; maxDepth: number };

export const DEFAULT_CANONICAL_LIMITS: Readonly<CanonicalLimits> = Object.freeze({
  maxBytes: 8 * 1024 * 1024,
  maxDepth: 64,
});

// No `u` flag on purpose: the pattern must look at UTF-16 code units, which is where lone surrogates live.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * RFC 8785 (JCS) canonical form of an I-JSON (RFC 7493) value. Validation and serialization happen in one
 * pass; anything outside the domain throws {@link CanonicalJsonError} instead of being coerced or dropped
 * the way `JSON.stringify` would.
 */
export function canonicalize(value: unknown, limits?: Partial<CanonicalLimits>): string {
  const writer = new CanonicalWriter(resolveLimits(limits));
  writer.value(value, 0);
  return writer.result();
}

function resolveLimits(limits: Partial<CanonicalLimits> | undefined): CanonicalLimits {
  // `??` rather than spread, so an explicit `{ maxDepth: undefined }` still means "default".
  const resolved = {
    maxBytes: limits?.maxBytes ?? DEFAULT_CANONICAL_LIMITS.maxBytes,
    maxDepth: limits?.maxDepth ?? DEFAULT_CANONICAL_LIMITS.maxDepth,
  };
  for (const [name, limit] of Object.entries(resolved)) {
    // A bad limit is a programming error, not bad input, so it is not a CanonicalJsonError.
    if (!Number.isSafeInteger(limit) || limit < 0) throw new RangeError(`canonical-json: ${name} must be a non-negative integer`);
  }
  return resolved;
}

class CanonicalWriter {
  private readonly parts: string[] = [];
  private bytes = 0;
  /** Segments of the JSON Pointer to the value being written; only turned into a string on failure. */
  private readonly path: (string | number)[] = [];
  /** Containers on the current path: a repeat here is a cycle, a repeat elsewhere is just a shared reference. */
  private readonly ancestors = new Set<object>();

  constructor(private readonly limits: CanonicalLimits) {}

  result(): string {
    return this.parts.join('');
  }

  /** `depth` is the depth of the enclosing container (0 at the top level). */
  value(value: unknown, depth: number): void {
    switch (typeof value) {
      case 'string':
        return this.string(value);
      case 'number':
        return this.number(value);
      case 'boolean':
        return this.emit(value ? 'true' : 'false');
      case 'object':
        return value === null ? this.emit('null') : this.container(value, depth + 1);
      case 'undefined':
        throw this.fail('undefined');
      case 'function':
        throw this.fail('function');
      case 'symbol':
        throw this.fail('symbol');
      case 'bigint':
        throw this.fail('bigint');
    }
  }

  private number(value: number): void {
    if (!Number.isFinite(value)) throw this.fail('non-finite-number');
    // Number.isInteger is true for every double ≥ 2^53 (including 1e300): all are outside I-JSON's exact range.
    if (Number.isInteger(value) && !Number.isSafeInteger(value)) throw this.fail('unsafe-integer');
    // ECMAScript Number::toString is exactly the RFC 8785 number format, and String(-0) is already "0".
    this.emit(String(value));
  }

  private string(value: string): void {
    // UTF-8 needs at least one byte per UTF-16 unit: refuse a huge string before escaping copies it.
    if (this.bytes + value.length + 2 > this.limits.maxBytes) throw this.fail('max-bytes');
    if (LONE_SURROGATE.test(value)) throw this.fail('lone-surrogate');
    // JSON.stringify's string escaping (\b \t \n \f \r \" \\, other controls as lowercase \u00xx) is RFC 8785's.
    const quoted = JSON.stringify(value);
    this.emit(quoted, Buffer.byteLength(quoted, 'utf8'));
  }

  private container(value: object, depth: number): void {
    if (this.ancestors.has(value)) throw this.fail('cycle');
    const isArray = Array.isArray(value);
    // Array subclasses and exotic objects would carry meaning their JSON form loses.
    const plain = isArray ? Object.getPrototypeOf(value) === Array.prototype : isPlainObject(value);
    if (!plain) throw this.fail('non-plain-object');
    if (depth > this.limits.maxDepth) throw this.fail('max-depth');
    this.ancestors.add(value);
    if (isArray) this.array(value as unknown[], depth);
    else this.object(value as Record<string, unknown>, depth);
    this.ancestors.delete(value);
  }

  private array(value: unknown[], depth: number): void {
    this.emit('[');
    for (let i = 0; i < value.length; i++) {
      if (i > 0) this.emit(',');
      this.path.push(i);
      // A hole reads as undefined; JSON.stringify would quietly turn it into null.
      if (!Object.prototype.hasOwnProperty.call(value, i)) throw this.fail('undefined', 'array hole has no JSON form');
      this.value(value[i], depth);
      this.path.pop();
    }
    this.emit(']');
  }

  private object(value: Record<string, unknown>, depth: number): void {
    if (Object.getOwnPropertySymbols(value).length > 0) throw this.fail('symbol', 'symbol-keyed property has no JSON form');
    // The default sort compares UTF-16 code units, which is exactly RFC 8785's member order.
    const keys = Object.keys(value).sort();
    this.emit('{');
    keys.forEach((key, i) => {
      if (i > 0) this.emit(',');
      this.path.push(key);
      this.string(key);
      this.emit(':');
      this.value(value[key], depth);
      this.path.pop();
    });
    this.emit('}');
  }

  /** Appends a chunk, failing as soon as the running UTF-8 size passes maxBytes. ASCII chunks: bytes = length. */
  private emit(chunk: string, byteLength = chunk.length): void {
    this.bytes += byteLength;
    if (this.bytes > this.limits.maxBytes) throw this.fail('max-bytes');
    this.parts.push(chunk);
  }

  private fail(reason: CanonicalJsonErrorReason, detail?: string): CanonicalJsonError {
    const pointer = this.path.map((segment) => '/' + String(segment).replace(/~/g, '~0').replace(/\//g, '~1')).join('');
    return new CanonicalJsonError(reason, pointer, detail);
  }
}

/** Prototype Object.prototype or null, and no toJSON (which would make its JSON form something else). */
function isPlainObject(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return false;
  return typeof (value as { toJSON?: unknown }).toJSON !== 'function';
}
