import { AppHostError, ConnectionReasons } from '@apphost/contracts';
import { systemClock, type Clock } from './clock';
import { MCP_REASONS } from './errors';

/** Caps of one multi-round-trip flow on a `full` connection. */
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

interface Flow {
  toolName: string;
  startedAt: number;
  round: number;
  requestState?: string;
}

/**
 * The multi-round-trip flows of one `full` connection. The registry never fulfils input itself: each
 * `input_required` round goes back to the caller, whose continuation must name the flow, stay within the
 * round and time caps, and echo `requestState` byte for byte (compared here, never re-encoded). The total time of a
 * flow is measured on `clock`.
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
    const flow: Flow = existing ?? { toolName, startedAt: this.clock.now(), round: 0 };
    flow.round += 1;
    flow.requestState = requestState;
    if (flow.round > this.limits.maxRounds) {
      if (flowId) this.flows.delete(flowId);
      throw new AppHostError('FAILED_PRECONDITION', `input requests exceeded ${this.limits.maxRounds} rounds`, {
        details: ConnectionReasons.details(MCP_REASONS.inputRequiredRounds),
      });
    }
    const id = flowId ?? `flow-${++this.next}-${Date.now().toString(36)}`;
    this.flows.set(id, flow);
    return { kind: 'input_required', flowId: id, round: flow.round, inputRequests, ...(requestState !== undefined ? { requestState } : {}) };
  }

  /** Validates a continuation before it is sent: the flow exists, caps hold, the state is echoed exactly. */
  continue(flowId: string, toolName: string, requestState: string | undefined): void {
    const flow = this.flows.get(flowId);
    if (!flow || flow.toolName !== toolName) {
      throw new AppHostError('FAILED_PRECONDITION', 'unknown input-request flow for this connection', {
        details: ConnectionReasons.details('INPUT_REQUIRED_FLOW_UNKNOWN'),
      });
    }
    if (this.clock.now() - flow.startedAt > this.limits.maxTotalMs) {
      this.flows.delete(flowId);
      throw new AppHostError('FAILED_PRECONDITION', `input-request flow exceeded ${this.limits.maxTotalMs} ms`, {
        details: ConnectionReasons.details(MCP_REASONS.inputRequiredTime),
      });
    }
    if (flow.requestState !== requestState) {
      throw new AppHostError('INVALID_ARGUMENT', 'requestState must be echoed exactly', {
        details: ConnectionReasons.details(MCP_REASONS.requestStateMismatch),
      });
    }
  }

  remainingMs(flowId: string): number {
    const flow = this.flows.get(flowId);
    return flow ? Math.max(1, this.limits.maxTotalMs - (this.clock.now() - flow.startedAt)) : this.limits.maxTotalMs;
  }

  finish(flowId: string | undefined): void {
    if (flowId) this.flows.delete(flowId);
  }

  get size(): number {
    return this.flows.size;
  }
}
