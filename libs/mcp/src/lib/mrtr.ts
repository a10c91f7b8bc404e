import { AppHostError, ConnectionReasons } from '@apphost/contracts';
import { systemClock, type Clock } from './clock';
import { MCP_REASONS } from './errors';

/** Caps of one multi-round-trip flow: rounds of `input_required`, and the flow's total time. */
export interface MrtrLimits {
  maxRounds: number;
  maxTotalMs: number;
}

export const DEFAULT_MRTR_LIMITS: MrtrLimits = { maxRounds: 4, maxTotalMs: 120_000 };

export interface InputRequiredOutcome {
  kind: 'input_required';
  flowId: string;
  round: number;
  inputRequests: Record<string, unknown>;
  requestState?: string;
}

export const roundsExceeded = (limits: MrtrLimits) =>
  new AppHostError('FAILED_PRECONDITION', `input requests exceeded ${limits.maxRounds} rounds`, {
    details: ConnectionReasons.details(MCP_REASONS.inputRequiredRounds, { maxRounds: limits.maxRounds }),
  });

export const timeExceeded = (limits: MrtrLimits) =>
  new AppHostError('FAILED_PRECONDITION', `input-request flow exceeded ${limits.maxTotalMs} ms`, {
    details: ConnectionReasons.details(MCP_REASONS.inputRequiredTime, { maxTotalMs: limits.maxTotalMs }),
  });

/**
 * The caps of one flow, on `clock` from the moment it is created: rounds are counted as they arrive (the one past
 * `maxRounds` is refused), time is checked before each continuation (more than `maxTotalMs` is refused).
 */
export class MrtrBudget {
  private rounds = 0;
  private readonly startedAt: number;

  constructor(
    readonly limits: MrtrLimits,
    private readonly clock: Clock = systemClock,
  ) {
    this.startedAt = clock.now();
  }

  /** Counts one `input_required` round and returns its number; INPUT_REQUIRED_ROUNDS_EXCEEDED past the cap. */
  countRound(): number {
    this.rounds += 1;
    if (this.rounds > this.limits.maxRounds) throw roundsExceeded(this.limits);
    return this.rounds;
  }

  /** INPUT_REQUIRED_TIME_EXCEEDED once more than `maxTotalMs` has passed. */
  assertTimeLeft(): void {
    if (this.clock.now() - this.startedAt > this.limits.maxTotalMs) throw timeExceeded(this.limits);
  }

  /** Time left of the flow, at least 1 ms (a request timeout of 0 would mean "none"). */
  remainingMs(): number {
    return Math.max(1, this.limits.maxTotalMs - (this.clock.now() - this.startedAt));
  }
}

/**
 * The `requestState` of a state-only round (no input requested): the only kind an `app-safe` connection continues.
 * A round that requests input fails closed (INPUT_REQUIRED_DENIED): an app-safe connection has no one to ask.
 */
export function stateOnlyRequestState(round: { inputRequests?: unknown; requestState?: unknown }): string {
  const requests = round.inputRequests;
  const asksForInput = requests !== undefined && requests !== null && (typeof requests !== 'object' || Object.keys(requests).length > 0);
  if (asksForInput || typeof round.requestState !== 'string') {
    throw new AppHostError('FAILED_PRECONDITION', 'the server asked for input on an app-safe connection', {
      details: ConnectionReasons.details(MCP_REASONS.inputRequiredDenied),
    });
  }
  return round.requestState;
}

interface Flow {
  toolName: string;
  budget: MrtrBudget;
  requestState?: string;
}

/**
 * The multi-round-trip flows of one `full` connection. The registry never fulfils input itself: each
 * `input_required` round goes back to the caller, whose continuation must name the flow, stay within the
 * round and time caps, and echo `requestState` byte for byte (compared here, never re-encoded). The total time of a
 * flow is measured on `clock`, from its first round.
 */
export class MrtrFlows {
  private readonly flows = new Map<string, Flow>();
  private next = 0;

  constructor(
    private readonly limits: MrtrLimits,
    private readonly clock: Clock = systemClock,
  ) {}

  /** Records an `input_required` answer and returns what the caller sees. */
  open(toolName: string, flowId: string | undefined, inputRequests: Record<string, unknown>, requestState: string | undefined): InputRequiredOutcome {
    const existing = flowId ? this.flows.get(flowId) : undefined;
    const flow: Flow = existing ?? { toolName, budget: new MrtrBudget(this.limits, this.clock) };
    flow.requestState = requestState;
    let round: number;
    try {
      round = flow.budget.countRound();
    } catch (error) {
      if (flowId) this.flows.delete(flowId);
      throw error;
    }
    const id = flowId ?? `flow-${++this.next}-${Date.now().toString(36)}`;
    this.flows.set(id, flow);
    return { kind: 'input_required', flowId: id, round, inputRequests, ...(requestState !== undefined ? { requestState } : {}) };
  }

  /** Validates a continuation before it is sent: the flow exists, caps hold, the state is echoed exactly. */
  continue(flowId: string, toolName: string, requestState: string | undefined): void {
    const flow = this.flows.get(flowId);
    if (!flow || flow.toolName !== toolName) {
      throw new AppHostError('FAILED_PRECONDITION', 'unknown input-request flow for this connection', {
        details: ConnectionReasons.details('INPUT_REQUIRED_FLOW_UNKNOWN'),
      });
    }
    try {
      flow.budget.assertTimeLeft();
    } catch (error) {
      this.flows.delete(flowId);
      throw error;
    }
    if (flow.requestState !== requestState) {
      throw new AppHostError('INVALID_ARGUMENT', 'requestState must be echoed exactly', {
        details: ConnectionReasons.details(MCP_REASONS.requestStateMismatch),
      });
    }
  }

  remainingMs(flowId: string): number {
    return this.flows.get(flowId)?.budget.remainingMs() ?? this.limits.maxTotalMs;
  }

  finish(flowId: string | undefined): void {
    if (flowId) this.flows.delete(flowId);
  }

  get size(): number {
    return this.flows.size;
  }
}
