import { SubjectNamespace } from './subject-namespace';
import {
  TransportError,
  type BusTransport,
  type TransportHandler,
  type TransportReply,
  type TransportRequestOptions,
  type TransportSubscription,
} from './transport';

interface Member {
  handler: TransportHandler;
  active: boolean;
}

interface QueueGroup {
  members: Member[];
  next: number;
}

/**
 * The all-in-one plane's transport: the same bytes, headers, queue-group and failure semantics as NATS
 * core request-reply, inside one process. Each queue group delivers a request to one member (round robin);
 * no member at all is "no responders"; a reply later than the timeout is dropped and reported as a timeout.
 */
export class InProcessTransport implements BusTransport {
  readonly kind = 'in-process' as const;
  private readonly groups = new Map<string, Map<string, QueueGroup>>();
  private closed = false;

  private readonly namespace: SubjectNamespace;

  constructor(
    readonly maxPayloadBytes = 1024 * 1024,
    readonly subjectPrefix = '',
  ) {
    this.namespace = new SubjectNamespace(subjectPrefix);
  }

  async request(subject: string, data: Uint8Array, options: TransportRequestOptions): Promise<TransportReply> {
    if (this.closed) throw new TransportError('closed', 'in-process transport is closed');
    if (data.byteLength > this.maxPayloadBytes) throw new TransportError('payload-too-large', 'message exceeds max payload');
    const targets = this.pickMembers(this.namespace.wire(subject));
    if (targets.length === 0) throw new TransportError('no-responders', 'no responders for subject');

    const headers = { ...options.headers };
    return new Promise<TransportReply>((resolve, reject) => {
      let settled = false;
      const timer = setTimeout(() => {
        settled = true;
        reject(new TransportError('timeout', 'request timed out'));
      }, options.timeoutMs);
      for (const member of targets) {
        // Deliver asynchronously with a private copy of the bytes, as a network hop would.
        setImmediate(() => {
          void member.handler({ subject, data: data.slice(), headers: { ...headers } }).then((reply) => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            resolve({ data: reply.data.slice(), headers: { ...reply.headers } });
          });
        });
      }
    });
  }

  subscribe(subject: string, queue: string, handler: TransportHandler): TransportSubscription {
    if (this.closed) throw new TransportError('closed', 'in-process transport is closed');
    const wireSubject = this.namespace.wire(subject);
    const bySubject = this.groups.get(wireSubject) ?? new Map<string, QueueGroup>();
    this.groups.set(wireSubject, bySubject);
    const wireQueue = this.namespace.wire(queue);
    const group: QueueGroup = bySubject.get(wireQueue) ?? { members: [], next: 0 };
    bySubject.set(wireQueue, group);
    const member: Member = { handler, active: true };
    group.members.push(member);
    return {
      drain: async () => {
        member.active = false;
        group.members = group.members.filter((m) => m !== member);
      },
    };
  }

  isConnected(): boolean {
    return !this.closed;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.groups.clear();
  }

  private pickMembers(subject: string): Member[] {
    const picked: Member[] = [];
    for (const group of this.groups.get(subject)?.values() ?? []) {
      const live = group.members.filter((m) => m.active);
      if (live.length === 0) continue;
      picked.push(live[group.next++ % live.length]);
    }
    return picked;
  }
}
