/**
 * A bus namespace: every subject and queue group a transport touches is prefixed with it, so two planes (or two
 * test suites) on one NATS server never answer each other. Empty in production: subjects stay `apphost.…`.
 */
export class SubjectNamespace {
  static readonly PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
  private readonly head: string;

  constructor(readonly prefix = '') {
    if (prefix !== '' && !SubjectNamespace.PATTERN.test(prefix)) {
      throw new Error(`bus subject prefix must match ${SubjectNamespace.PATTERN} (got ${JSON.stringify(prefix)})`);
    }
    this.head = prefix ? `${prefix}.` : '';
  }

  /** The subject or queue group as it goes on the wire. */
  wire(name: string): string {
    return this.head + name;
  }

  /** The logical subject of a delivered message (what contracts and handlers know). */
  logical(wireSubject: string): string {
    return this.head && wireSubject.startsWith(this.head) ? wireSubject.slice(this.head.length) : wireSubject;
  }
}
