import { Client, StreamableHTTPClientTransport, isInputRequiredResult } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { AppHostError, ConnectionReasons } from '@apphost/contracts';
import { systemClock, type Clock } from './clock';
import { buildClientCapabilities, type AdvertisedCapabilities, type ConnectionClass } from './capabilities';
import { APP_MIME_TYPE } from './constants';
import { connectFailure } from './connect-failure';
import { MCP_REASONS, toAppHostError } from './errors';
import { DEFAULT_MRTR_LIMITS, MrtrBudget, MrtrFlows, stateOnlyRequestState, type InputRequiredOutcome, type MrtrLimits } from './mrtr';
import { DEFAULT_DISCOVERY_BOUNDS, walkPages, type DiscoveryBounds, type Walked } from './pagination';
import { StdioDiagnostics } from './stdio-diagnostics';
import type { JsonStringLiteral } from './json-string-literals';
import { LongTexts } from './long-texts';
import { useLinearStdioReads } from './stdio-line-buffer';
import type { McpTarget, ProtocolMode } from './target';

export interface OpenConnectionOptions {
  target: McpTarget;
  /** Named in connect errors, so a failure says which toolset could not start. */
  toolsetId?: string;
  connectionClass: ConnectionClass;
  /** Honoured only for `app-safe`: advertise `extensions["io.modelcontextprotocol/ui"]`. */
  advertiseUi: boolean;
  mimeTypes?: readonly string[];
  protocol?: ProtocolMode;
  connectTimeoutMs: number;
  /** Default per-request timeout when an operation does not give one. */
  requestTimeoutMs?: number;
  /** Caps of multi-round flows: caller-driven on `full`, continued internally (state-only rounds) on `app-safe`. */
  mrtr?: MrtrLimits;
  /** Measures the total time of multi-round input flows and of an app-safe call's legs (`systemClock` unless given). */
  clock?: Clock;
  clientInfo?: { name: string; version: string };
  /** Called once when the connection ends for any reason (close, server exit, transport error). */
  onClosed?: (reason: 'closed' | 'transport') => void;
}

export interface McpTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

/** A `resources/list` entry as the server listed it. */
export interface McpResource {
  uri: string;
  name?: string;
  mimeType?: string;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

/** A `resources/templates/list` entry as the server listed it. */
export interface McpResourceTemplate {
  uriTemplate: string;
  name?: string;
  mimeType?: string;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

type ListMethod = 'tools/list' | 'resources/list' | 'resources/templates/list';

export interface CallToolInput {
  name: string;
  arguments?: Record<string, unknown>;
  /** A continuation of an `input_required` round (`full` connections only). */
  continuation?: { flowId: string; inputResponses: Record<string, unknown>; requestState?: string };
}

export interface CallToolOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void;
}

export type CallToolOutcome = { kind: 'complete'; result: Record<string, unknown> } | InputRequiredOutcome;

const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/**
 * One live MCP client connection of a class. Every request has a timeout; every failure is an AppHostError;
 * nothing is retried. The advertisement is fixed at construction: an initialized connection cannot retract it,
 * so revocation closes the connection.
 */
export class McpConnection {
  private closedReason: 'closed' | 'transport' | undefined;
  private readonly flows: MrtrFlows;
  private readonly clock: Clock;

  private constructor(
    private readonly client: Client,
    private readonly transport: StdioClientTransport | StreamableHTTPClientTransport,
    /** A stdio connection's long texts of read answers, kept as the server wrote them (none over HTTP). */
    private readonly longTexts: LongTexts | undefined,
    readonly connectionClass: ConnectionClass,
    readonly capabilities: AdvertisedCapabilities,
    private readonly options: OpenConnectionOptions,
  ) {
    this.clock = options.clock ?? systemClock;
    this.flows = new MrtrFlows(options.mrtr ?? DEFAULT_MRTR_LIMITS, this.clock);
  }

  static async open(options: OpenConnectionOptions): Promise<McpConnection> {
    const advertiseUi = options.connectionClass === 'app-safe' && options.advertiseUi;
    const capabilities = buildClientCapabilities(options.connectionClass, advertiseUi, options.mimeTypes ?? [APP_MIME_TYPE]);
    const protocol = options.protocol ?? 'legacy';
    const client = new Client(options.clientInfo ?? { name: 'apphost-binding-registry', version: '1' }, {
      capabilities: capabilities as never,
      versionNegotiation: { mode: protocol === 'legacy' || protocol === 'auto' ? protocol : { pin: protocol } },
      // The registry never fulfils input itself: app-safe refuses input requests and continues state-only rounds,
      // full hands every round to the caller.
      inputRequired: { autoFulfill: false },
      listMaxPages: 1,
    });
    if (options.connectionClass === 'full') {
      // A 2025-era server pushing an elicitation: there is no user on this path, so it is cancelled.
      client.setRequestHandler('elicitation/create', async () => ({ action: 'cancel' as const }));
    }
    const longTexts = options.target.kind === 'stdio' ? new LongTexts() : undefined;
    const transport = createTransport(options.target, longTexts);
    const diagnostics = transport instanceof StdioClientTransport ? new StdioDiagnostics(transport) : undefined;
    const connection = new McpConnection(client, transport, longTexts, options.connectionClass, capabilities, options);
    client.onclose = () => connection.markClosed('transport');
    client.onerror = () => undefined; // surfaced through the pending request instead
    try {
      await client.connect(transport, { timeout: options.connectTimeoutMs });
    } catch (error) {
      await transport.close().catch(() => undefined);
      // The child's last stderr bytes pass through a stream: one turn lets them arrive before they are quoted.
      if (diagnostics) await new Promise<void>((resolve) => setImmediate(resolve));
      throw connectFailure(error, {
        target: options.target,
        toolsetId: options.toolsetId,
        connectTimeoutMs: options.connectTimeoutMs,
        exit: diagnostics?.exit,
        lastStderrLine: diagnostics?.lastStderrLine,
      });
    }
    return connection;
  }

  get closed(): boolean {
    return this.closedReason !== undefined;
  }

  get advertisesUi(): boolean {
    return this.capabilities.extensions !== undefined;
  }

  /** The server process id (stdio), for diagnostics and tests. */
  get pid(): number | null {
    return this.transport instanceof StdioClientTransport ? this.transport.pid : null;
  }

  get protocolEra(): string | undefined {
    return this.client.getProtocolEra();
  }

  /** Every page of `tools/list` within `bounds`; any violation denies the listing. */
  listTools(bounds: DiscoveryBounds = DEFAULT_DISCOVERY_BOUNDS): Promise<Walked<McpTool>> {
    return this.listAll<McpTool>('tools/list', 'tools', bounds);
  }

  /** Every page of `resources/list` within `bounds` (none without the server's `resources` capability). */
  listResources(bounds: DiscoveryBounds = DEFAULT_DISCOVERY_BOUNDS): Promise<Walked<McpResource>> {
    return this.listAll<McpResource>('resources/list', 'resources', bounds);
  }

  /** Every page of `resources/templates/list` within `bounds` (none without the server's `resources` capability). */
  listResourceTemplates(bounds: DiscoveryBounds = DEFAULT_DISCOVERY_BOUNDS): Promise<Walked<McpResourceTemplate>> {
    return this.listAll<McpResourceTemplate>('resources/templates/list', 'resourceTemplates', bounds);
  }

  private async listAll<T>(method: ListMethod, key: string, bounds: DiscoveryBounds): Promise<Walked<T>> {
    this.assertOpen(method);
    // A server that declares no resources has none to list: asking would only draw "method not found".
    if (method !== 'tools/list' && this.client.getServerCapabilities()?.resources === undefined) return { items: [], pages: 0, bytes: 0 };
    try {
      return await walkPages<T>(async (cursor, remainingMs) => {
        // One wire request per page (the SDK's aggregate path would walk pages outside these bounds).
        const result = (await this.client.request({ method, params: cursor === undefined ? {} : { cursor } } as never, {
          timeout: remainingMs,
          maxTotalTimeout: remainingMs,
        })) as Record<string, unknown>;
        const bytes = Buffer.byteLength(JSON.stringify(result), 'utf8');
        const items = result[key];
        if (!Array.isArray(items))
          throw new AppHostError('FAILED_PRECONDITION', `${method} returned no ${key} array`, {
            details: ConnectionReasons.details(MCP_REASONS.invalidResult, { operation: method }),
          });
        const nextCursor = typeof result['nextCursor'] === 'string' ? result['nextCursor'] : undefined;
        return { page: { items: items as T[], nextCursor }, bytes };
      }, bounds);
    } catch (error) {
      throw toAppHostError(error, method);
    }
  }

  /**
   * One `tools/call` as the caller sees it. On a `full` connection each `input_required` round goes back to the
   * caller (`continuation` answers it). On an `app-safe` connection a round that requests input fails closed, and
   * state-only rounds are continued here — a fresh request per leg, `requestState` echoed byte for byte, no input
   * responses — within the MRTR caps and the call's one timeout, until a terminal result. `signal` aborts whichever
   * leg is running. A 2025-era connection has no rounds on the wire: one request, whatever its server does inside it.
   */
  async callTool(input: CallToolInput, options: CallToolOptions = {}): Promise<CallToolOutcome> {
    this.assertOpen('tools/call');
    const continuation = input.continuation;
    if (continuation && this.connectionClass === 'app-safe') {
      throw new AppHostError('FAILED_PRECONDITION', 'an app-safe connection never answers input requests', {
        details: ConnectionReasons.details(MCP_REASONS.inputRequiredDenied),
      });
    }
    if (this.connectionClass === 'app-safe') return this.callAppSafe(input, options);
    if (continuation) this.flows.continue(continuation.flowId, input.name, continuation.requestState);
    const params: Record<string, unknown> = { name: input.name, arguments: input.arguments ?? {} };
    if (continuation) {
      params['inputResponses'] = continuation.inputResponses;
      if (continuation.requestState !== undefined) params['requestState'] = continuation.requestState;
    }
    const timeout = Math.min(options.timeoutMs ?? this.defaultTimeout, continuation ? this.flows.remainingMs(continuation.flowId) : Number.MAX_SAFE_INTEGER);
    const result = await this.sendCall(params, timeout, options);
    if (isInputRound(result)) {
      return this.flows.open(
        input.name,
        continuation?.flowId,
        (result['inputRequests'] as Record<string, unknown>) ?? {},
        result['requestState'] as string | undefined,
      );
    }
    this.flows.finish(continuation?.flowId);
    return { kind: 'complete', result };
  }

  /** The app-safe loop of a call: state-only rounds continue here; the caller's timeout bounds every leg together. */
  private callAppSafe(input: CallToolInput, options: CallToolOptions): Promise<CallToolOutcome> {
    const params: Record<string, unknown> = { name: input.name, arguments: input.arguments ?? {} };
    return this.appSafeRounds('tools/call', options.timeoutMs ?? this.defaultTimeout, options.signal, (leg, timeout) =>
      this.sendCall(leg ? { ...params, ...leg } : params, timeout, options),
    ).then((result) => ({ kind: 'complete', result }));
  }

  /**
   * The app-safe round loop of `tools/call` and `resources/read` (2026-07-28: both may answer `input_required`): a
   * round that requests input fails closed; a state-only round is continued — a fresh request per leg, `requestState`
   * echoed byte for byte, no input responses — within one MrtrBudget (rounds, total time) and `timeoutMs` for every
   * leg together, until a terminal result.
   */
  private async appSafeRounds(
    operation: RoundOperation,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    send: (leg: { inputResponses: Record<string, never>; requestState: string } | undefined, timeout: number) => Promise<Record<string, unknown>>,
  ): Promise<Record<string, unknown>> {
    const deadline = this.clock.now() + timeoutMs;
    const budget = new MrtrBudget(this.options.mrtr ?? DEFAULT_MRTR_LIMITS, this.clock);
    let result = await send(undefined, Math.max(1, deadline - this.clock.now()));
    while (isInputRound(result)) {
      const requestState = stateOnlyRequestState(result);
      budget.countRound();
      budget.assertTimeLeft();
      if (signal?.aborted) throw callCancelled();
      const callerLeft = deadline - this.clock.now();
      if (callerLeft <= 0) throw legsTimedOut(operation);
      const cappedByFlow = budget.remainingMs() < callerLeft;
      try {
        result = await send({ inputResponses: {}, requestState }, Math.min(callerLeft, budget.remainingMs()));
      } catch (error) {
        // The flow's time ran out under a leg in flight: for a call, the server may have acted on it.
        if (cappedByFlow && ConnectionReasons.of(error) === MCP_REASONS.timeout) throw flowTimedOutInLeg(budget.limits, operation);
        throw error;
      }
    }
    return result;
  }

  /** One wire `tools/call` (a fresh request id); an `input_required` answer is returned as it came. */
  private async sendCall(params: Record<string, unknown>, timeout: number, options: CallToolOptions): Promise<Record<string, unknown>> {
    // Progress gate: notifications admitted before the terminal response are drained before the result is
    // returned; anything later is dropped (the SDK dispatches progress handlers independently of the response).
    // The SDK hands a notification to its handler one microtask after reading it, and settles the call several
    // microtasks after reading the response, so a call that has seen no progress by then has none queued: only a
    // call that reported progress waits the extra turn. (For every call it cost a turn per reply, and on a busy
    // owner one socket write per reply instead of one per batch of replies.)
    let gateOpen = true;
    let reported = false;
    const onProgress = options.onProgress;
    const admitted = onProgress
      ? (p: { progress: number; total?: number; message?: string }) => {
          if (!gateOpen) return;
          reported = true;
          onProgress(p);
        }
      : undefined;
    try {
      const result = (await this.client.callTool(params as never, {
        timeout,
        maxTotalTimeout: timeout,
        signal: options.signal,
        allowInputRequired: true,
        ...(admitted ? { onprogress: admitted, resetTimeoutOnProgress: false } : {}),
      })) as Record<string, unknown>;
      if (reported) await new Promise<void>((resolve) => setImmediate(resolve));
      gateOpen = false;
      return result;
    } catch (error) {
      if (options.signal?.aborted) throw callCancelled();
      throw toAppHostError(error, 'tools/call');
    }
  }

  /**
   * One `resources/read`, never from the SDK's cache. On an `app-safe` connection its 2026-07-28 rounds go through the
   * same loop as `callTool` (state-only continued, an input request fails closed, the same MRTR caps) and `timeoutMs`
   * bounds every leg together; on a `full` connection an `input_required` answer is refused (INPUT_REQUIRED_DENIED).
   */
  async readResource(uri: string, timeoutMs?: number): Promise<Record<string, unknown>> {
    return this.withLongTexts(await this.read(uri, timeoutMs), (literal) => ({ text: literal.decode() }));
  }

  /**
   * `readResource`, but an item's long `text` (64 KiB or more, on stdio) comes as `textLiteral`: the JSON string token
   * the server wrote, never decoded. Every other item, and every item over HTTP, comes as `readResource` gives it.
   */
  async readResourceKeepingLongTexts(uri: string, timeoutMs?: number): Promise<Record<string, unknown>> {
    return this.withLongTexts(await this.read(uri, timeoutMs), (literal) => ({ textLiteral: literal }));
  }

  private async read(uri: string, timeoutMs: number | undefined): Promise<Record<string, unknown>> {
    this.assertOpen('resources/read');
    const timeout = timeoutMs ?? this.defaultTimeout;
    if (this.connectionClass !== 'app-safe') return this.sendRead({ uri }, { timeout });
    return this.appSafeRounds('resources/read', timeout, undefined, (leg, legTimeout) =>
      this.sendRead(leg ? { uri, ...leg } : { uri }, { timeout: legTimeout, maxTotalTimeout: legTimeout, allowInputRequired: true }),
    );
  }

  /** The answer with each held long text (a marker in `text`) replaced by what `as` makes of its literal. */
  private withLongTexts(answer: Record<string, unknown>, as: (literal: JsonStringLiteral) => Record<string, unknown>): Record<string, unknown> {
    const contents = answer['contents'];
    if (!this.longTexts || !Array.isArray(contents)) return answer;
    const taken = (contents as unknown[]).map((item) => {
      const text = (item as Record<string, unknown> | null)?.['text'];
      const literal = typeof text === 'string' ? this.take(text) : undefined;
      if (!literal) return item;
      const { text: _marker, ...rest } = item as Record<string, unknown>;
      return { ...rest, ...as(literal) };
    });
    return { ...answer, contents: taken };
  }

  private take(text: string): JsonStringLiteral | undefined {
    try {
      return this.longTexts?.take(text);
    } catch {
      throw new AppHostError('UNAVAILABLE', 'the answer of resources/read lost a long text before it was read: retry the read', {
        details: { operation: 'resources/read' },
      });
    }
  }

  /** One wire `resources/read` (a fresh request id); with `allowInputRequired` an `input_required` answer is returned as it came. */
  private async sendRead(
    params: Record<string, unknown>,
    options: { timeout: number; maxTotalTimeout?: number; allowInputRequired?: boolean },
  ): Promise<Record<string, unknown>> {
    try {
      return (await this.client.readResource(params as never, { ...options, cacheMode: 'bypass' })) as Record<string, unknown>;
    } catch (error) {
      throw toAppHostError(error, 'resources/read');
    }
  }

  async ping(timeoutMs?: number): Promise<void> {
    this.assertOpen('ping');
    try {
      await this.client.ping({ timeout: timeoutMs ?? this.defaultTimeout });
    } catch (error) {
      throw toAppHostError(error, 'ping');
    }
  }

  /** Idempotent: the first call closes the client (and ends a stdio server process). */
  async close(): Promise<void> {
    if (this.closedReason !== undefined) return;
    this.markClosed('closed');
    await this.client.close().catch(() => undefined);
    await this.transport.close().catch(() => undefined);
    this.longTexts?.clear();
  }

  private get defaultTimeout(): number {
    return this.options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  }

  private markClosed(reason: 'closed' | 'transport'): void {
    if (this.closedReason !== undefined) return;
    this.closedReason = reason;
    this.options.onClosed?.(reason);
  }

  private assertOpen(operation: string): void {
    if (this.closedReason !== undefined) {
      throw new AppHostError('FAILED_PRECONDITION', `the MCP connection is closed (${operation})`, {
        details: ConnectionReasons.details(MCP_REASONS.connectionClosed),
      });
    }
  }
}

/** An `input_required` answer (2026-07-28 only: the 2025-era codec has no such result and never yields one). */
function isInputRound(result: Record<string, unknown>): boolean {
  return isInputRequiredResult(result as never) || result['resultType'] === 'input_required';
}

const callCancelled = () =>
  new AppHostError('FAILED_PRECONDITION', 'the tool call was cancelled', { details: ConnectionReasons.details(MCP_REASONS.cancelled) });

type RoundOperation = 'tools/call' | 'resources/read';

// As toAppHostError decides for one request: a call that timed out may have acted (OUTCOME_UNKNOWN); a read has not.
const legsTimedOut = (operation: RoundOperation) =>
  operation === 'tools/call'
    ? new AppHostError('OUTCOME_UNKNOWN', 'tools/call timed out between input-request legs; the server may have acted', {
        details: ConnectionReasons.details(MCP_REASONS.timeout, { operation }),
      })
    : new AppHostError('DEADLINE_EXCEEDED', `${operation} timed out between input-request legs`, {
        details: ConnectionReasons.details(MCP_REASONS.timeout, { operation }),
      });

const flowTimedOutInLeg = (limits: MrtrLimits, operation: RoundOperation) =>
  operation === 'tools/call'
    ? new AppHostError('OUTCOME_UNKNOWN', `the input-request flow exceeded ${limits.maxTotalMs} ms during a leg; the server may have acted`, {
        details: ConnectionReasons.details(MCP_REASONS.inputRequiredTime, { maxTotalMs: limits.maxTotalMs, operation }),
      })
    : new AppHostError('FAILED_PRECONDITION', `the input-request flow of ${operation} exceeded ${limits.maxTotalMs} ms during a leg`, {
        details: ConnectionReasons.details(MCP_REASONS.inputRequiredTime, { maxTotalMs: limits.maxTotalMs, operation }),
      });

function createTransport(target: McpTarget, longTexts: LongTexts | undefined): StdioClientTransport | StreamableHTTPClientTransport {
  if (target.kind === 'stdio') {
    // The SDK's safe inherited set (PATH, HOME, …) plus the spec's own variables: never the registry's whole environment.
    return useLinearStdioReads(
      new StdioClientTransport({
        command: target.command,
        args: target.args,
        env: { ...getDefaultEnvironment(), ...(target.env ?? {}) },
        cwd: target.cwd,
        // Piped and drained by StdioDiagnostics: a server that dies at start is quoted in the connect error.
        stderr: 'pipe',
      }),
      longTexts,
    );
  }
  return new StreamableHTTPClientTransport(new URL(target.url), { requestInit: { headers: target.headers ?? {}, redirect: 'error' } });
}
